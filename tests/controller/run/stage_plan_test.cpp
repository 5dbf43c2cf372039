// StagePlan: stage ends (duration, sessions, requests), settle windows, routing of requests to
// stages by intended time, and a search's stages made while the plan runs. Hand-advanced clock.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "controller/run/stage_plan.hpp"
#include "test_time.hpp"

using convoy::LoadLevel;
using convoy::LoadMode;
using convoy::RampShape;
using convoy::StageConfig;
using convoy::controller::StageCounters;
using convoy::controller::StageEvent;
using convoy::controller::StageEventKind;
using convoy::controller::StagePlan;

namespace {

constexpr int64_t kPlanT0 = 500 * kS;

StageConfig stage(const char* name, double duration_s, double settle_s = 0) {
  StageConfig s;
  s.name = name;
  s.mode = LoadMode::kConcurrency;
  s.concurrency = LoadLevel{4, 4, RampShape::kLinear, false};
  s.duration_s = duration_s;
  s.settle_s = settle_s;
  return s;
}

std::vector<StageEventKind> kinds(const std::vector<StageEvent>& events) {
  std::vector<StageEventKind> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

using K = StageEventKind;

}  // namespace

TEST_CASE("stage plan: duration stages run back to back at their exact edges") {
  StagePlan plan({stage("a", 10), stage("b", 20), stage("c", 5)});
  CHECK(kinds(plan.start(kPlanT0)) == std::vector<K>{K::kStarted});
  StageCounters busy{3, 9, kPlanT0, 3};
  CHECK(plan.next_deadline_ns() == kPlanT0 + 10 * kS);
  CHECK(plan.advance(kPlanT0 + 10 * kS - 1, busy).empty());
  // The loop woke late: the edge is still the stage's, not the wake-up's.
  auto ev = plan.advance(kPlanT0 + 10 * kS + 7'000'000, busy);
  CHECK(kinds(ev) == std::vector<K>{K::kEnded, K::kSettled, K::kStarted});
  CHECK(ev[0].at_ns == kPlanT0 + 10 * kS);
  CHECK(ev[2].stage == 1);
  CHECK(plan.windows()[1].start_ns == kPlanT0 + 10 * kS);
  CHECK(plan.windows()[1].config.index == 1);
  CHECK(kinds(plan.advance(kPlanT0 + 30 * kS, busy)) ==
        std::vector<K>{K::kEnded, K::kSettled, K::kStarted});
  CHECK(kinds(plan.advance(kPlanT0 + 35 * kS, busy)) ==
        std::vector<K>{K::kEnded, K::kSettled, K::kDone});
  CHECK(plan.done());
  CHECK_FALSE(plan.next_deadline_ns().has_value());
}

TEST_CASE("stage plan: a request belongs to the stage in which it was intended to be sent") {
  StagePlan plan({stage("a", 10, /*settle_s=*/2), stage("b", 10)});
  plan.start(kPlanT0);
  StageCounters busy{1, 1, kPlanT0, 1};
  CHECK(plan.route(kPlanT0 + 3 * kS).stage == 0);  // while it runs, its end unknown
  CHECK(kinds(plan.advance(kPlanT0 + 10 * kS, busy)) == std::vector<K>{K::kEnded});
  CHECK(plan.settling());
  CHECK_FALSE(plan.wants_more(busy));  // nothing new starts in a settle
  CHECK(plan.next_deadline_ns() == kPlanT0 + 12 * kS);
  CHECK(kinds(plan.advance(kPlanT0 + 12 * kS, busy)) == std::vector<K>{K::kSettled, K::kStarted});
  CHECK(plan.route(kPlanT0 + 10 * kS - 1).stage == 0);
  CHECK(plan.route(kPlanT0 + 10 * kS).settle);      // intended in the settle: no stage, no metric
  CHECK(plan.route(kPlanT0 + 10 * kS).stage == 0);  // whose settle it is
  CHECK(plan.route(kPlanT0 + 12 * kS - 1).settle);
  CHECK(plan.route(kPlanT0 + 12 * kS).stage == 1);
  CHECK_FALSE(plan.route(kPlanT0 + 12 * kS).settle);
  CHECK(plan.route(kPlanT0 - 1).stage == -1);
  plan.advance(kPlanT0 + 22 * kS, busy);
  CHECK(plan.done());
  CHECK(plan.route(kPlanT0 + 22 * kS).stage == -1);  // after the profile: its drain
  CHECK_FALSE(plan.route(kPlanT0 + 22 * kS).settle);
}

TEST_CASE("stage plan: a settle ends early when nothing is in flight") {
  StagePlan plan({stage("a", 10, /*settle_s=*/30), stage("b", 10)});
  plan.start(kPlanT0);
  plan.advance(kPlanT0 + 10 * kS, StageCounters{5, 5, kPlanT0, 2});
  REQUIRE(plan.settling());
  CHECK(plan.advance(kPlanT0 + 11 * kS, StageCounters{5, 5, kPlanT0, 1}).empty());
  auto ev = plan.advance(kPlanT0 + 13 * kS, StageCounters{5, 5, kPlanT0, 0});
  CHECK(kinds(ev) == std::vector<K>{K::kSettled, K::kStarted});
  CHECK(plan.windows()[0].settle_end_ns == kPlanT0 + 13 * kS);
  CHECK(plan.windows()[1].start_ns == kPlanT0 + 13 * kS);
}

TEST_CASE("stage plan: sessions and requests ends count what the stage started") {
  SUBCASE("sessions") {
    StageConfig s = stage("n", 0);
    s.duration_s.reset();
    s.sessions = 3;
    StagePlan plan({s, stage("next", 5)});
    plan.start(kPlanT0);
    CHECK(plan.wants_more(StageCounters{2, 8, kPlanT0 + kS, 2}));
    CHECK_FALSE(plan.wants_more(StageCounters{3, 12, kPlanT0 + 2 * kS, 3}));
    CHECK(plan.advance(kPlanT0 + 3 * kS, StageCounters{2, 8, kPlanT0 + kS, 2}).empty());
    // The third was sent ahead of its intended start: the window closes only after it.
    CHECK(plan.advance(kPlanT0 + 2 * kS, StageCounters{3, 12, kPlanT0 + 2 * kS, 3}).empty());
    auto ev = plan.advance(kPlanT0 + 2 * kS + 1, StageCounters{3, 12, kPlanT0 + 2 * kS, 3});
    CHECK(kinds(ev) == std::vector<K>{K::kEnded, K::kSettled, K::kStarted});
    CHECK(ev[0].at_ns == kPlanT0 + 2 * kS + 1);
  }
  SUBCASE("requests") {
    StageConfig s = stage("r", 0);
    s.duration_s.reset();
    s.requests = 10;
    StagePlan plan({s});
    plan.start(kPlanT0);
    CHECK(plan.wants_more(StageCounters{2, 8, kPlanT0, 2}));
    CHECK_FALSE(plan.wants_more(StageCounters{3, 12, kPlanT0, 3}));
    CHECK_FALSE(plan.next_deadline_ns().has_value());  // a count end has no deadline
    CHECK(plan.advance(kPlanT0 + kS, StageCounters{2, 8, kPlanT0, 2}).empty());
    CHECK(kinds(plan.advance(kPlanT0 + kS, StageCounters{3, 12, kPlanT0, 3})) ==
          std::vector<K>{K::kEnded, K::kSettled, K::kDone});
  }
}

TEST_CASE("stage plan: a search's next stage comes when the previous one settled") {
  // The search judges a step once its in-flight work ended, bounded by the wait (grace_s).
  std::vector<int> asked;
  auto next = [&](int finished) -> std::optional<StageConfig> {
    asked.push_back(finished);
    if (finished >= 2) return std::nullopt;
    return stage("step", 10);
  };
  StagePlan plan({}, next, /*wait_idle_ns=*/5 * kS);
  CHECK(kinds(plan.start(kPlanT0)) == std::vector<K>{K::kStarted});
  CHECK(asked == std::vector<int>{-1});
  // Step 0 ends with work in flight; the wait ends when it is idle.
  CHECK(kinds(plan.advance(kPlanT0 + 10 * kS, StageCounters{4, 4, kPlanT0, 4})) ==
        std::vector<K>{K::kEnded});
  CHECK(asked.size() == 1);  // not judged before its in-flight work ended
  CHECK(kinds(plan.advance(kPlanT0 + 12 * kS, StageCounters{4, 4, kPlanT0, 0})) ==
        std::vector<K>{K::kSettled, K::kStarted});
  CHECK(asked == std::vector<int>{-1, 0});
  // Step 1: never idle; the wait is bounded.
  plan.advance(kPlanT0 + 22 * kS, StageCounters{4, 4, kPlanT0, 4});
  CHECK(plan.next_deadline_ns() == kPlanT0 + 27 * kS);
  CHECK(kinds(plan.advance(kPlanT0 + 27 * kS, StageCounters{4, 4, kPlanT0, 4})) ==
        std::vector<K>{K::kSettled, K::kStarted});
  CHECK(plan.windows()[1].settle_end_ns == kPlanT0 + 27 * kS);
  plan.advance(kPlanT0 + 37 * kS, StageCounters{4, 4, kPlanT0, 0});
  CHECK(plan.done());
  CHECK(asked == std::vector<int>{-1, 0, 1, 2});
  CHECK(plan.windows().size() == 3);
}

TEST_CASE("stage plan: a last stage ending on requests waits for its conversations' later turns") {
  StageConfig s = stage("r", 0);
  s.duration_s.reset();
  s.requests = 10;
  SUBCASE("until nothing is in flight") {
    StagePlan plan({s});
    plan.set_final_count_wait_ns(30 * kS);
    plan.start(kPlanT0);
    CHECK(kinds(plan.advance(kPlanT0 + kS, StageCounters{3, 12, kPlanT0, 3})) ==
          std::vector<K>{K::kEnded});
    CHECK(plan.settling());
    CHECK(plan.next_deadline_ns() == kPlanT0 + 31 * kS);
    CHECK(plan.advance(kPlanT0 + 5 * kS, StageCounters{3, 12, kPlanT0, 1}).empty());
    CHECK(kinds(plan.advance(kPlanT0 + 6 * kS, StageCounters{3, 12, kPlanT0, 0})) ==
          std::vector<K>{K::kSettled, K::kDone});
    CHECK(plan.windows()[0].settle_end_ns == kPlanT0 + 6 * kS);
  }
  SUBCASE("bounded by the wait") {
    StagePlan plan({s});
    plan.set_final_count_wait_ns(2 * kS);
    plan.start(kPlanT0);
    plan.advance(kPlanT0 + kS, StageCounters{3, 12, kPlanT0, 3});
    CHECK(kinds(plan.advance(kPlanT0 + 3 * kS, StageCounters{3, 12, kPlanT0, 2})) ==
          std::vector<K>{K::kSettled, K::kDone});
  }
  SUBCASE("a stage that is not the last does not wait: the next one counts its turns") {
    StagePlan plan({s, stage("next", 5)});
    plan.set_final_count_wait_ns(30 * kS);
    plan.start(kPlanT0);
    CHECK(kinds(plan.advance(kPlanT0 + kS, StageCounters{3, 12, kPlanT0, 3})) ==
          std::vector<K>{K::kEnded, K::kSettled, K::kStarted});
  }
}
