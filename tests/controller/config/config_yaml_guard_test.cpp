// YAML aliases can neither crash nor hang the loader, the expanded document is
// bounded (limits::kMaxYamlNodes / kMaxYamlBytes / kMaxYamlDepth) with FILE:LINE: key beyond it,
// and a second document in one file is an error.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "controller/config/limits.hpp"
#include "controller/config_test_util.hpp"

using convoy::test::error_of;

namespace {

// A billion laughs: anchor a0 = "lol", each a(k+1) = ten a(k); `levels` levels deep, as the
// keys of a mapping indented by `indent`. a5 crosses 100,000 values at its eighth alias.
std::string laughs(int levels, const std::string& indent) {
  std::string y = indent + "a0: &a0 lol\n";
  for (int k = 1; k <= levels; ++k) {
    y += indent + "a" + std::to_string(k) + ": &a" + std::to_string(k) + " [";
    for (int i = 0; i < 10; ++i) y += (i ? ", *a" : "*a") + std::to_string(k - 1);
    y += "]\n";
  }
  return y;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("a recursive alias is a FILE:LINE error, not a crash") {
  CHECK_ERROR("x: &r [*r]\n", "c.yaml:1: x[0]: recursive alias");
  CHECK_ERROR("name: a\nx:\n  y: &r\n    z: [1, *r]\n", "c.yaml:4: x.y.z[1]: recursive alias");
  // The same refusal for an override's value.
  const std::string e = error_of("name: a\n", {"target.extra_body=&r {a: *r}"});
  CHECK_MESSAGE(convoy::test::contains(e, "--set target.extra_body=&r {a: *r}: a: recursive"), e);
}

TEST_CASE("a billion laughs is refused at once, wherever it is used") {
  const auto t0 = std::chrono::steady_clock::now();
  SUBCASE("at the top level (an unknown key, once read)") {
    CHECK_ERROR(laughs(9, ""), "c.yaml:6: a5[7]: the document holds more than 100000 values");
  }
  SUBCASE("under target.extra_body") {
    CHECK_ERROR("target:\n  extra_body:\n" + laughs(9, "    "),
                "c.yaml:8: target.extra_body.a5[7]: the document holds more than 100000 values");
  }
  SUBCASE("where an integer is expected") {
    CHECK_ERROR("load:\n  concurrency:\n" + laughs(9, "    "),
                "c.yaml:8: load.concurrency.a5[7]: the document holds more than 100000 values");
  }
  SUBCASE("in bytes: one long string aliased many times") {
    std::string y = "s: &s " + std::string(1 << 20, 'x') + "\nl: [";
    for (int i = 0; i < 9; ++i) y += (i ? ", *s" : "*s");
    CHECK_ERROR(y + "]\n", "c.yaml:2: l[6]: the document holds more than 8 MiB of text");
  }
  CHECK(seconds_since(t0) < 10.0);  // milliseconds here; 211 s and growing tenfold per level before
}

TEST_CASE("10,000 stages aliasing one stage are a load error, not a bad_alloc mid-run") {
  std::string y = "load:\n  stages:\n    - &s {mode: concurrency, concurrency: 2, duration_s: 1}\n";
  for (int i = 1; i < 10000; ++i) y += "    - *s\n";
  const std::string e = error_of(y);
  CHECK_MESSAGE(convoy::test::contains(e, "c.yaml:"), e);
  CHECK_MESSAGE(convoy::test::contains(e, ":2: load.stages: 10000 stages: a profile holds at most"),
                e);
  SUBCASE("below the node bound, the stage count bound still holds") {
    std::string few = "load:\n  stages:\n    - &s {duration_s: 1}\n";
    for (int i = 1; i < 1001; ++i) few += "    - *s\n";
    CHECK_ERROR(few, "c.yaml:2: load.stages: 1001 stages: a profile holds at most 1000 stages");
  }
  SUBCASE("exactly 1000 aliased stages load (names are their index)") {
    std::string ok = "load:\n  stages:\n    - &s {concurrency: 1, duration_s: 1}\n";
    for (int i = 1; i < 1000; ++i) ok += "    - *s\n";
    CHECK(convoy::parse_config(ok, "c.yaml").load.stages.size() == 1000);
  }
}

TEST_CASE("aliases within the bounds still work") {
  const auto c = convoy::parse_config(
      "target:\n  extra_body: {a: &v [1, 2], b: *v}\n"
      "load:\n  stages:\n    - &s {concurrency: 3, duration_s: 2}\n    - *s\n",
      "c.yaml");
  CHECK(c.target.extra_body_json == R"({"a":[1,2],"b":[1,2]})");
  REQUIRE(c.load.stages.size() == 2);
  CHECK(c.load.stages[1].concurrency.from == 3);
}

TEST_CASE("a second YAML document is an error, not silently ignored") {
  CHECK_ERROR("name: a\n---\nname: b\n", "c.yaml:2: a second YAML document");
  CHECK_ERROR("name: a\n---\n", "a second YAML document");
  // One document with an explicit start or end marker is fine.
  CHECK(convoy::parse_config("---\nname: a\n", "c.yaml").name == "a");
  CHECK(convoy::parse_config("name: a\n...\n", "c.yaml").name == "a");
}

TEST_CASE("nesting deeper than the bound is refused") {
  std::string deep;
  for (std::size_t i = 0; i < convoy::limits::kMaxYamlDepth + 1; ++i) deep += "[";
  for (std::size_t i = 0; i < convoy::limits::kMaxYamlDepth + 1; ++i) deep += "]";
  CHECK_ERROR("target:\n  extra_body:\n    a: " + deep + "\n", "c.yaml:3: target.extra_body.a",
              "nested deeper than 64 levels");
}
