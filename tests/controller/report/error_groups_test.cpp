// ErrorGroups: failed requests grouped by failure mode in bounded memory.
#include "controller/report/error_groups.hpp"

#include <doctest/doctest.h>

#include <string>

using convoy::controller::ErrorGroups;
using convoy::proto::ErrorKind;
using convoy::proto::Record;

namespace {

Record grouped_failure(ErrorKind kind, std::string message, std::string correlation_id,
                       int64_t http_status = 0) {
  Record r;
  r.error.kind = kind;
  r.error.message = std::move(message);
  r.http_status = http_status;
  r.x_correlation_id = std::move(correlation_id);
  return r;
}

}  // namespace

TEST_CASE("error groups: one group per failure mode, largest first, a few examples each") {
  ErrorGroups groups;
  groups.add(grouped_failure(ErrorKind::kHttpStatus, "overloaded", "a", 503));
  for (int i = 0; i < 5; ++i) {
    groups.add(grouped_failure(ErrorKind::kConnect, "port " + std::to_string(8000 + i) + " refused",
                               "c" + std::to_string(i)));
  }
  const auto g = groups.groups();
  REQUIRE(g.size() == 2);
  CHECK(g[0].type == "connect");
  CHECK(g[0].count == 5);
  CHECK(g[0].message == "port N refused");
  CHECK(g[0].example == "port 8000 refused");
  CHECK(g[0].example_correlation_ids.size() == ErrorGroups::kExamples);
  CHECK(g[1].code == 503);
  CHECK(g[1].type == "http_status");
}

TEST_CASE("error groups: past kMaxGroups distinct errors share one group, memory bounded") {
  ErrorGroups groups;
  std::string word = "a";
  for (size_t i = 0; i < ErrorGroups::kMaxGroups; ++i) {
    groups.add(grouped_failure(ErrorKind::kOther, "failure " + word, "x"));
    word += 'a';
  }
  const size_t bytes = groups.memory_bytes();
  for (int i = 0; i < 100; ++i) {
    groups.add(
        grouped_failure(ErrorKind::kOther, "another failure " + std::string(40, 'b') + word, "y"));
    word += 'c';
  }
  const auto g = groups.groups();
  CHECK(g.size() == ErrorGroups::kMaxGroups + 1);
  CHECK(g[0].type == "other");
  CHECK(g[0].count == 100);
  CHECK(groups.memory_bytes() < bytes + 2 * ErrorGroups::kMaxMessageBytes + 1024);
  SUBCASE("a long message is cut at kMaxMessageBytes") {
    ErrorGroups one;
    one.add(grouped_failure(ErrorKind::kOther, std::string(2000, 'z'), "z"));
    CHECK(one.groups()[0].example.size() == ErrorGroups::kMaxMessageBytes + 3);  // "..."
  }
}
