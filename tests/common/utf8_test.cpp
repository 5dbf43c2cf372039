#include "common/utf8.hpp"

#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace {

using convoy::find_invalid_utf8;
using convoy::is_valid_utf8;
using convoy::sanitize_utf8;
using convoy::sanitize_utf8_in_place;

constexpr size_t kNpos = std::string_view::npos;
const std::string kFffd = "\xEF\xBF\xBD";

// A second, differently built judge: decode the code point from the lead byte's bit pattern,
// then reject overlongs, surrogates and values above U+10FFFF.
bool reference_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (lead < 0x80) {
      len = 1;
      cp = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      len = 2;
      cp = lead & 0x1Fu;
    } else if ((lead & 0xF0) == 0xE0) {
      len = 3;
      cp = lead & 0x0Fu;
    } else if ((lead & 0xF8) == 0xF0) {
      len = 4;
      cp = lead & 0x07u;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3Fu);
    }
    constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

bool rapidjson_accepts_as_string(std::string_view s) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(buffer.GetString(), buffer.GetSize());
  return !doc.HasParseError();
}

}  // namespace

TEST_CASE("utf8 validation agrees with a reference decoder on every short sequence") {
  std::string s;
  for (int a = 0; a < 256; ++a) {
    s.assign(1, static_cast<char>(a));
    REQUIRE(is_valid_utf8(s) == reference_valid(s));
    for (int b = 0; b < 256; ++b) {
      s.assign({static_cast<char>(a), static_cast<char>(b)});
      REQUIRE(is_valid_utf8(s) == reference_valid(s));
    }
  }
  // Every three-byte string whose lead is not ASCII (the ASCII ones reduce to the above).
  for (int a = 0x80; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c = 0; c < 256; ++c) {
        s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
        if (is_valid_utf8(s) != reference_valid(s)) {
          FAIL_CHECK("disagree on ", a, " ", b, " ", c);
          return;
        }
      }
    }
  }
  // Four-byte leads with every second byte and the edges of the continuation range after it.
  const int edges[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0xBF, 0xC0, 0xFF};
  for (int a = 0xF0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      for (int c : edges) {
        for (int d : edges) {
          s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c),
                    static_cast<char>(d)});
          REQUIRE(is_valid_utf8(s) == reference_valid(s));
        }
      }
    }
  }
}

TEST_CASE("utf8 validation reports the offset of the first ill-formed byte") {
  CHECK(find_invalid_utf8("") == kNpos);
  CHECK(find_invalid_utf8("plain ascii") == kNpos);
  CHECK(find_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == kNpos);  // é € 😀
  CHECK(find_invalid_utf8("ab\xFF") == 2);
  CHECK(find_invalid_utf8("ab\xC3") == 2);                         // truncated at the end
  CHECK(find_invalid_utf8("\xC3\xA9x\xE2\x82y") == 3);             // truncated in the middle
  CHECK(find_invalid_utf8("\xC0\xAF") == 0);                       // overlong '/'
  CHECK(find_invalid_utf8("\xED\xA0\x80") == 0);                   // surrogate U+D800
  CHECK(find_invalid_utf8("\xF4\x90\x80\x80") == 0);               // U+110000
  CHECK(find_invalid_utf8(std::string_view("a\0b", 3)) == kNpos);  // NUL is a code point
}

TEST_CASE("utf8 sanitizing replaces each maximal ill-formed subpart with U+FFFD") {
  CHECK(sanitize_utf8("ok \xC3\xA9") == "ok \xC3\xA9");
  CHECK(sanitize_utf8("\xFF\xFE") == kFffd + kFffd);
  CHECK(sanitize_utf8("a\xE2\x82") == "a" + kFffd);             // one subpart, one U+FFFD
  CHECK(sanitize_utf8("a\xE2\x82\"b") == "a" + kFffd + "\"b");  // the quote survives
  CHECK(sanitize_utf8("\xF0\x9F\x98") == kFffd);
  CHECK(sanitize_utf8("\xC0\xAF") == kFffd + kFffd);  // C0 is never a lead; AF alone neither
  CHECK(sanitize_utf8("\xED\xA0\x80") == kFffd + kFffd + kFffd);
  CHECK(sanitize_utf8("x\xE2\x82\xACy\x80z") == "x\xE2\x82\xACy" + kFffd + "z");

  std::string text = "bad \xFF\xFE and \xE2\x82";
  CHECK(sanitize_utf8_in_place(text) == 3);
  CHECK(text == "bad " + kFffd + kFffd + " and " + kFffd);
  CHECK(sanitize_utf8_in_place(text) == 0);
}

TEST_CASE("utf8 sanitizing makes any bytes valid and keeps every ASCII byte in place") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<size_t> length(0, 64);
  for (int round = 0; round < 20'000; ++round) {
    std::string raw(length(rng), '\0');
    for (char& c : raw) c = static_cast<char>(byte(rng));
    const std::string clean = sanitize_utf8(raw);
    REQUIRE(is_valid_utf8(clean));
    REQUIRE(reference_valid(clean));
    REQUIRE(rapidjson_accepts_as_string(clean));
    CHECK(sanitize_utf8(clean) == clean);
    // The ASCII bytes, in order, are the same before and after: structure built of ASCII
    // (JSON quotes, CSV commas, HTML tags) never changes.
    std::string ascii_raw, ascii_clean;
    for (char c : raw)
      if (static_cast<unsigned char>(c) < 0x80) ascii_raw += c;
    for (char c : clean)
      if (static_cast<unsigned char>(c) < 0x80) ascii_clean += c;
    REQUIRE(ascii_raw == ascii_clean);
    if (is_valid_utf8(raw)) REQUIRE(clean == raw);
  }
  CHECK_FALSE(rapidjson_accepts_as_string("\xFF"));  // the check above can fail
}

TEST_CASE("utf8 validation finds a bad byte at every offset of long ASCII text (the word path)") {
  // find_invalid_utf8 checks ASCII eight bytes at a time: every offset, around and across the
  // word boundaries, with good and bad sequences, must give what the byte-wise reference gives.
  const std::string ascii(40, 'a');
  for (size_t at = 0; at < ascii.size(); ++at) {
    CAPTURE(at);
    std::string bad = ascii;
    bad[at] = static_cast<char>(0xFF);
    CHECK(find_invalid_utf8(bad) == at);
    std::string truncated = ascii.substr(0, at) + "\xE2\x82";  // ends mid-sequence
    CHECK(find_invalid_utf8(truncated) == at);
    std::string good = ascii;
    good.insert(at, "\xE2\x82\xAC");  // U+20AC
    CHECK(find_invalid_utf8(good) == kNpos);
    std::string after_good = good + ascii + "\xC0\xAF";  // an overlong after more ASCII
    CHECK(find_invalid_utf8(after_good) == good.size() + ascii.size());
    CHECK(is_valid_utf8(after_good) == reference_valid(after_good));
  }
}
