#include "common/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace convoy {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

struct Step {
  size_t length;  // bytes taken: the whole sequence, or its maximal ill-formed subpart (>= 1)
  bool ok;
};

// The sequence starting at p[0] (n >= 1 bytes available), by Unicode Table 3-7. The second
// byte's range depends on the lead (it rules out overlongs, surrogates and > U+10FFFF); later
// bytes are plain continuations.
Step step(const unsigned char* p, size_t n) noexcept {
  const unsigned char lead = p[0];
  if (lead < 0x80) return {1, true};
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead == 0xE0) {
    need = 2;
    lo = 0xA0;
  } else if (lead == 0xED) {
    need = 2;
    hi = 0x9F;
  } else if (lead >= 0xE1 && lead <= 0xEF) {
    need = 2;
  } else if (lead == 0xF0) {
    need = 3;
    lo = 0x90;
  } else if (lead == 0xF4) {
    need = 3;
    hi = 0x8F;
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    need = 3;
  } else {
    return {1, false};  // 80..C1 or F5..FF: never a lead byte
  }
  size_t i = 1;
  for (; i <= need; ++i) {
    if (i >= n) return {i, false};  // truncated at the end of the text
    const unsigned char b = p[i];
    const bool fits = i == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!fits) return {i, false};  // the byte that broke it starts the next step
  }
  return {i, true};
}

}  // namespace

size_t find_invalid_utf8(std::string_view text) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    // ASCII eight bytes at a time: what servers and records mostly hold (a scrape's 329 KB reply,
    // every records.jsonl line) is checked at word speed, not byte by byte.
    while (i + 8 <= n) {
      uint64_t word = 0;
      std::memcpy(&word, p + i, sizeof word);
      if ((word & 0x8080808080808080ULL) != 0) break;
      i += 8;
    }
    if (i >= n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const Step s = step(p + i, n - i);
    if (!s.ok) return i;
    i += s.length;
  }
  return std::string_view::npos;
}

std::string sanitize_utf8(std::string_view text) {
  const size_t first = find_invalid_utf8(text);
  if (first == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  out.append(text.substr(0, first));
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = first; i < n;) {
    const Step s = step(p + i, n - i);
    if (s.ok) {
      out.append(text.substr(i, s.length));
    } else {
      out.append(kReplacement);
    }
    i += s.length;
  }
  return out;
}

size_t sanitize_utf8_in_place(std::string& text) {
  if (is_valid_utf8(text)) return 0;
  size_t replaced = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0, n = text.size(); i < n;) {
    const Step s = step(p + i, n - i);
    if (!s.ok) ++replaced;
    i += s.length;
  }
  text = sanitize_utf8(text);
  return replaced;
}

}  // namespace convoy
