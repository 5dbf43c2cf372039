// `convoy compare` on a summary.json cut short says so, and where, instead of
// rapidjson's "The document is empty".
#include <doctest/doctest.h>

#include <string>

#include "controller/compare/comparison.hpp"
#include "controller/compare/run_loader.hpp"

using convoy::controller::compare::column_from_summary;
using convoy::controller::compare::CompareError;

namespace {

std::string error_of(const std::string& text) {
  try {
    column_from_summary("runs/a", text);
  } catch (const CompareError& e) {
    return e.what();
  }
  FAIL("no CompareError for: " << text);
  return {};
}

}  // namespace

TEST_CASE("compare names a truncated or broken summary.json and the byte offset") {
  const std::string whole = R"({"convoy_version": "1.0", "run": {"name": "a"}})";
  SUBCASE("empty: cut before anything was written") {
    const std::string e = error_of("");
    CHECK_MESSAGE(
        e.find("runs/a is not a convoy run: summary.json is empty (0 bytes)") != std::string::npos,
        e);
  }
  SUBCASE("cut in the middle") {
    const std::string e = error_of(whole.substr(0, 30));
    CHECK_MESSAGE(e.find("summary.json is truncated: invalid JSON, it ends at byte offset 30") !=
                      std::string::npos,
                  e);
  }
  SUBCASE("broken at an offset") {
    std::string broken = whole;
    broken[18] = '#';
    const std::string e = error_of(broken);
    CHECK_MESSAGE(e.find("invalid JSON at byte offset 18 of 47 bytes") != std::string::npos, e);
  }
}
