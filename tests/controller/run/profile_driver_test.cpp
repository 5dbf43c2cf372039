// The load profile's driver on its own: stages started and ended by the clock, each record
// routed to the stage it was intended in (or its settle), each stage's metrics, the breaker.
#include <doctest/doctest.h>

#include "test_time.hpp"

#include <optional>
#include <string>

#include "controller/config/config.hpp"
#include "controller/report/report_records.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/run/profile_driver.hpp"
#include "controller/run/schedule.hpp"

using convoy::Config;
using convoy::LoadMode;
using convoy::parse_config;
using convoy::controller::ProfileDriver;
using convoy::controller::ProfileHooks;
using convoy::controller::RecordEvent;
using convoy::controller::RequestMetrics;
using convoy::controller::RunFacts;
using convoy::controller::Scheduler;
namespace proto = convoy::proto;

namespace {

// Routes `r` as the pipeline does and hands the driver the event; returns the stage (with
// "/settle" for a settle request).
std::string feed_driver(ProfileDriver& driver, const proto::Record& r) {
  const RequestMetrics m = convoy::controller::compute_request_metrics(r);
  RecordEvent e{r, m, "w1", "h", {}, false, false};
  e.measured = true;
  e.route = driver.route(r);
  driver.on_record(e);
  return std::string(e.route.stage) + (e.route.settle ? "/settle" : "");
}

}  // namespace

TEST_CASE("profile driver: stages by the clock, records by their intended time, settles apart") {
  const Config c = parse_config(
      "load:\n  concurrency: 2\n  stages:\n"
      "    - {name: a, concurrency: 2, duration_s: 1, settle_s: 1}\n"
      "    - {name: b, concurrency: 4, duration_s: 1}\n",
      "c.yaml");
  RunFacts facts;
  ProfileDriver driver(c, facts, /*quiet=*/true);
  Scheduler scheduler(c.load, LoadMode::kConcurrency, c.seed, std::nullopt, 0);
  driver.begin_measure(0, ProfileHooks{&scheduler, nullptr, nullptr, nullptr});
  REQUIRE(driver.staged());
  REQUIRE(facts.stages.size() == 1);
  CHECK(facts.stages[0].config.name == "a");
  CHECK(feed_driver(driver, convoy::test::streamed_ok_record(kS / 2)) == "a");

  CHECK(driver.next_deadline_ns() == kS);
  // One conversation is still in flight: a's settle waits for it, up to a second.
  auto step = driver.advance(kS + 1, 1);
  CHECK(step.changed);
  CHECK_FALSE(step.done);
  CHECK(feed_driver(driver, convoy::test::streamed_ok_record(kS + kS / 2)) == "a/settle");
  CHECK(facts.settle_requests == 1);

  step = driver.advance(2 * kS + 1, 1);  // the settle's second is over: b starts
  CHECK(step.changed);
  REQUIRE(facts.stages.size() == 2);
  CHECK(feed_driver(driver, convoy::test::streamed_ok_record(2 * kS + kS / 2)) == "b");
  for (int i = 0; i < 3 && !step.done; ++i) step = driver.advance(3 * kS + 1 + i, 0);
  CHECK(step.done);

  driver.finish(3 * kS + 2);
  CHECK(facts.stages[0].end_ns == kS);
  CHECK(facts.stages[0].metrics.request_count == 1);  // the settle request is in no stage
  CHECK(facts.stages[1].metrics.request_count == 1);
}

TEST_CASE("profile driver: a single-level run has no stages, and the breaker trips once") {
  const Config c =
      parse_config("load:\n  abort_on: {error_rate: 0.5, min_requests: 4}\n", "c.yaml");
  RunFacts facts;
  ProfileDriver driver(c, facts, /*quiet=*/true);
  Scheduler scheduler(c.load, LoadMode::kConcurrency, c.seed, std::nullopt, 0);
  driver.begin_measure(0, ProfileHooks{&scheduler, nullptr, nullptr, nullptr});
  CHECK_FALSE(driver.staged());
  CHECK(driver.wants_more());
  for (int i = 0; i < 4; ++i) {
    proto::Record r = convoy::test::streamed_ok_record(i * kS / 10);
    if (i > 0) r.error.kind = proto::ErrorKind::kHttpStatus;
    CHECK(feed_driver(driver, r).empty());
  }
  const auto why = driver.check_breaker(kS);
  REQUIRE(why.has_value());
  CHECK(facts.aborted_reason == why);
  CHECK_FALSE(driver.check_breaker(kS + 1).has_value());  // once
}
