// JsonLineWriter (controller/report/json_line_writer.hpp): records.jsonl's strings written eight
// bytes at a time must be byte for byte what rapidjson's own Writer writes.
#include "controller/report/json_line_writer.hpp"

#include <doctest/doctest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <random>
#include <string>

namespace {

std::string with_rapidjson(const std::string& s) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  w.StartObject();
  w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  w.EndObject();
  return {b.GetString(), b.GetSize()};
}

std::string with_line_writer(const std::string& s) {
  rapidjson::StringBuffer b;
  convoy::controller::JsonLineWriter w(b);
  w.StartObject();
  w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  w.EndObject();
  return {b.GetString(), b.GetSize()};
}

}  // namespace

TEST_CASE("json line writer: strings are written exactly as rapidjson's Writer writes them") {
  SUBCASE("every byte value, alone and at every offset of a 24-byte run (both sides of a word)") {
    for (int c = 0; c < 256; ++c) {
      for (size_t at = 0; at < 24; ++at) {
        std::string s(24, 'x');
        s[at] = static_cast<char>(c);
        CAPTURE(c);
        CAPTURE(at);
        REQUIRE(with_line_writer(s) == with_rapidjson(s));
      }
      const std::string one(1, static_cast<char>(c));
      REQUIRE(with_line_writer(one) == with_rapidjson(one));
    }
  }
  SUBCASE("random bytes of every length up to 70, escapes dense and sparse") {
    std::mt19937 rng(7);
    for (int round = 0; round < 4000; ++round) {
      const size_t n = static_cast<size_t>(round % 71);
      std::string s(n, ' ');
      const bool dense = round % 3 == 0;
      for (char& ch : s) {
        const auto r = static_cast<unsigned>(rng());
        ch = dense ? static_cast<char>(r & 0xFF) : static_cast<char>(0x20 + (r % 0x5F));
        if (!dense && r % 29 == 0) ch = "\"\\\n\x01\x7f\xc3"[r % 6];
      }
      CAPTURE(round);
      REQUIRE(with_line_writer(s) == with_rapidjson(s));
    }
  }
  SUBCASE("the empty string and string views") {
    CHECK(with_line_writer("") == with_rapidjson(""));
    rapidjson::StringBuffer b;
    convoy::controller::JsonLineWriter w(b);
    w.StartArray();
    w.String(std::string_view("a\"b"));
    w.String("c\td");
    w.EndArray();
    CHECK(std::string(b.GetString(), b.GetSize()) == R"(["a\"b","c\td"])");
  }
}

TEST_CASE("json line writer: a literal key is written as rapidjson writes that key") {
  rapidjson::StringBuffer ours;
  convoy::controller::JsonLineWriter w(ours);
  rapidjson::StringBuffer theirs;
  rapidjson::Writer<rapidjson::StringBuffer> r(theirs);
  w.StartObject();
  r.StartObject();
  w.Key("x_request_id");  // first member: no comma
  r.Key("x_request_id");
  w.Int(1);
  r.Int(1);
  w.Key("metrics");  // after a member: the comma, then a nested object's first key
  r.Key("metrics");
  w.StartObject();
  r.StartObject();
  w.Key("");
  r.Key("");
  w.Null();
  r.Null();
  w.Key("ttft_ms");
  r.Key("ttft_ms");
  w.Double(6.350853);
  r.Double(6.350853);
  w.EndObject();
  r.EndObject();
  w.EndObject();
  r.EndObject();
  CHECK(w.IsComplete());
  CHECK(std::string(ours.GetString(), ours.GetSize()) ==
        std::string(theirs.GetString(), theirs.GetSize()));
  CHECK(std::string(ours.GetString(), ours.GetSize()) ==
        R"({"x_request_id":1,"metrics":{"":null,"ttft_ms":6.350853}})");
}
