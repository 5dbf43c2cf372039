// record_problem: a worker's record that cannot be a real request is named as malformed.
#include <doctest/doctest.h>

#include <string>

#include "controller/run/record_check.hpp"

using convoy::controller::kRecordTimeSlackNs;
using convoy::controller::record_problem;
using convoy::controller::RecordBounds;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

convoy::proto::Record good() {
  convoy::proto::Record r;
  r.intended_ns = 100 * kSecond;
  r.sent_ns = 100 * kSecond + 1000;
  r.first_token_ns = 101 * kSecond;
  r.end_ns = 102 * kSecond;
  r.input_tokens = 32;
  r.output_tokens = 8;
  r.http_status = 200;
  r.chunk_gaps_ns = {1000, 2000};
  return r;
}

}  // namespace

TEST_CASE("record_problem passes a real request and names each kind of malformed one") {
  const RecordBounds b{90 * kSecond, 200 * kSecond, 2};
  CHECK_FALSE(record_problem(good(), b).has_value());
  SUBCASE("a cancelled request never sent: zeros are no times") {
    auto r = good();
    r.sent_ns = r.first_token_ns = r.end_ns = 0;
    r.http_status = 0;
    CHECK_FALSE(record_problem(r, b).has_value());
  }
  auto problem = [&](convoy::proto::Record r) {
    auto why = record_problem(r, b);
    REQUIRE(why.has_value());
    return *why;
  };
  auto r = good();
  SUBCASE("negative token counts") {
    r.output_tokens = -5;
    CHECK(problem(r) == "output_tokens -5 < 0");
    r = good();
    r.input_tokens = -1;
    CHECK(problem(r).find("input_tokens") == 0);
    r = good();
    r.cached_tokens = -2;
    CHECK(problem(r).find("cached_tokens") == 0);
    r = good();
    r.cached_tokens = -1;  // not reported: fine
    CHECK_FALSE(record_problem(r, b).has_value());
  }
  SUBCASE("times far outside the run, either side, by more than the slack") {
    r.end_ns = 200 * kSecond + kRecordTimeSlackNs;
    CHECK_FALSE(record_problem(r, b).has_value());
    r.end_ns += 1;
    CHECK(problem(r).find("end_ns is") == 0);
    r = good();
    r.intended_ns = 90 * kSecond - kRecordTimeSlackNs - 1;
    CHECK(problem(r).find("intended_ns is -60 s from the run's start") == 0);
    r = good();
    r.first_token_ns = INT64_MAX;
    CHECK(problem(r).find("first_token_ns") == 0);
  }
  SUBCASE("an end before the send, a negative gap, an impossible status") {
    r.end_ns = r.sent_ns - 1;
    CHECK(problem(r) == "end_ns before sent_ns");
    r = good();
    r.chunk_gaps_ns.push_back(-3);
    CHECK(problem(r).find("a negative chunk gap") == 0);
    r = good();
    r.http_status = 1000;
    CHECK(problem(r).find("http_status") == 0);
  }
  SUBCASE("a url index out of range") {
    r.url_index = 2;
    CHECK(problem(r) == "url_index 2 past the 2 target URL(s)");
    CHECK(record_problem(r, RecordBounds{90 * kSecond, 200 * kSecond, 3}) == std::nullopt);
    r.url_index = 1;  // one target.url: target.urls is empty, index 0 only
    CHECK(record_problem(r, RecordBounds{90 * kSecond, 200 * kSecond, 0}) ==
          std::optional<std::string>("url_index 1 past the 1 target URL(s)"));
  }
}
