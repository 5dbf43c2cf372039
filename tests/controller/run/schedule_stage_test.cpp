// Load profiles as pure functions of config, seed and a hand-advanced clock: stage levels, ramps
// and the boundaries between stages.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "controller/dataset/ids.hpp"
#include "controller/run/schedule.hpp"
#include "controller/run/sharding.hpp"
#include "schedule_test_util.hpp"
#include "test_time.hpp"

using convoy::Arrival;
using convoy::LoadMode;
using convoy::controller::Dispatch;
using convoy::controller::Scheduler;
using convoy::controller::Sharder;
using convoy::test::kScheduleStart;
using convoy::test::schedule_concurrency_load;

namespace {

using convoy::LoadLevel;
using convoy::RampShape;
using convoy::StageConfig;
using convoy::controller::stage_slots_at;
using convoy::controller::stage_slots_next_change_ns;
using convoy::controller::StageArrivals;

LoadLevel flat(double v) { return LoadLevel{v, v, RampShape::kLinear, false}; }
LoadLevel ramp(double from, double to, RampShape shape = RampShape::kLinear) {
  return LoadLevel{from, to, shape, true};
}

StageConfig rate_stage(LoadLevel rate, double duration_s, Arrival arrival = Arrival::kConstant,
                       int index = 0, double cap = 1e6) {
  StageConfig s;
  s.index = index;
  s.mode = LoadMode::kRate;
  s.rate = rate;
  s.concurrency = flat(cap);
  s.arrival = arrival;
  s.duration_s = duration_s;
  return s;
}

StageConfig concurrency_stage(LoadLevel slots, std::optional<double> duration_s, int index = 0) {
  StageConfig s;
  s.index = index;
  s.mode = LoadMode::kConcurrency;
  s.concurrency = slots;
  s.duration_s = duration_s;
  return s;
}

// Every arrival time of a stage (seconds after its start) up to `limit` arrivals.
std::vector<double> arrival_times_s(const StageConfig& stage, uint64_t seed, size_t limit) {
  StageArrivals a(stage, seed, kScheduleStart);
  std::vector<double> out;
  while (out.size() < limit) {
    auto t = a.next_ns();
    if (!t) break;
    out.push_back(static_cast<double>(*t - kScheduleStart) / 1e9);
  }
  return out;
}

size_t count_in(const std::vector<double>& times, double from_s, double to_s) {
  return static_cast<size_t>(
      std::count_if(times.begin(), times.end(), [&](double t) { return t >= from_s && t < to_s; }));
}

}  // namespace

TEST_CASE("ramp schedule: a linear rate ramp delivers the ramp's integral in every window") {
  // 10/s -> 100/s over 60 s: Lambda(t) = 10 t + 0.75 t^2; constant arrivals hit it to +-1.
  const auto times = arrival_times_s(rate_stage(ramp(10, 100), 60), 7, 100'000);
  auto lambda = [](double t) { return 10 * t + 0.75 * t * t; };
  for (double from = 0; from < 60; from += 10) {
    INFO("window from ", from, " s");
    const double expected = lambda(from + 10) - lambda(from);
    CHECK(std::abs(static_cast<double>(count_in(times, from, from + 10)) - expected) <= 1.5);
  }
  // After the ramp the rate stays at `to`.
  CHECK(std::abs(static_cast<double>(count_in(times, 60, 70)) - 1000) <= 1.5);
  CHECK(std::is_sorted(times.begin(), times.end()));
  CHECK(times.front() == 0);  // the first arrival opens the stage
}

TEST_CASE("ramp schedule: an exponential rate ramp multiplies the rate in equal times") {
  // 10/s -> 160/s over 40 s: the rate doubles every 10 s; Lambda(t) = 10 * 10/ln2 (2^(t/10) - 1).
  const auto times =
      arrival_times_s(rate_stage(ramp(10, 160, RampShape::kExponential), 40), 7, 100'000);
  auto lambda = [](double t) { return 100 / std::log(2.0) * (std::pow(2.0, t / 10) - 1); };
  for (double from = 0; from < 40; from += 10) {
    INFO("window from ", from, " s");
    const double expected = lambda(from + 10) - lambda(from);
    CHECK(std::abs(static_cast<double>(count_in(times, from, from + 10)) - expected) <= 1.5);
  }
}

TEST_CASE("ramp schedule: a poisson ramp is an inhomogeneous poisson process of the ramp") {
  // 20/s -> 200/s over 30 s: 3,300 expected; a poisson count has sd sqrt(3300) ~ 57.
  const auto times = arrival_times_s(rate_stage(ramp(20, 200), 30, Arrival::kPoisson), 11, 100'000);
  const auto total = static_cast<double>(count_in(times, 0, 30));
  CHECK(std::abs(total - 3300) < 4 * std::sqrt(3300.0));
  // The last 5 s hold many more arrivals than the first 5 s: 962.5 against 137.5 expected.
  CHECK(count_in(times, 25, 30) > 5 * count_in(times, 0, 5));
  SUBCASE("a ramp down to 0 ends the arrivals") {
    const auto down = arrival_times_s(rate_stage(ramp(50, 0), 10), 3, 100'000);
    CHECK(std::abs(static_cast<double>(down.size()) - 250) < 4 * std::sqrt(250.0) + 1);
    CHECK(down.back() <= 10.0);
  }
}

TEST_CASE("ramp schedule: a concurrency ramp steps the slots at evenly spaced times") {
  // 1 -> 4 over 40 s: four levels of 10 s each.
  const LoadLevel r = ramp(1, 4);
  CHECK(stage_slots_at(r, 40.0, 0) == 1);
  CHECK(stage_slots_at(r, 40.0, 10 * kS - 1) == 1);
  CHECK(stage_slots_at(r, 40.0, 10 * kS) == 2);
  CHECK(stage_slots_at(r, 40.0, 25 * kS) == 3);
  CHECK(stage_slots_at(r, 40.0, 30 * kS) == 4);
  CHECK(stage_slots_at(r, 40.0, 90 * kS) == 4);
  CHECK(stage_slots_next_change_ns(r, 40.0, 0) == 10 * kS);
  CHECK(stage_slots_next_change_ns(r, 40.0, 10 * kS) == 20 * kS);
  CHECK_FALSE(stage_slots_next_change_ns(r, 40.0, 30 * kS).has_value());
  CHECK(stage_slots_at(ramp(8, 2), 30.0, 29 * kS) == 2);  // down: 8, 7, ... 2 (7 levels)
  CHECK(stage_slots_at(flat(5), 30.0, 12 * kS) == 5);
  CHECK_FALSE(stage_slots_next_change_ns(flat(5), 30.0, 0).has_value());

  // In the scheduler: nothing ends, so each new slot starts a conversation intended exactly
  // at the step.
  Scheduler s(schedule_concurrency_load(1), LoadMode::kConcurrency, 1, std::nullopt,
              kScheduleStart);
  s.set_stage(concurrency_stage(r, 40.0), 1, kScheduleStart);
  std::vector<int64_t> intended;
  for (int64_t t = kScheduleStart; t <= kScheduleStart + 45 * kS; t += 100 * kMs) {
    for (const auto& d : s.due(t, 0)) intended.push_back(d.intended_ns - kScheduleStart);
    if (auto next = s.next_intended_ns()) CHECK(*next > t);
  }
  CHECK(intended == std::vector<int64_t>{0, 10 * kS, 20 * kS, 30 * kS});
  CHECK(s.in_flight() == 4);
}

TEST_CASE("stage schedule: when concurrency drops nothing starts until in flight is below it") {
  Scheduler s(schedule_concurrency_load(1), LoadMode::kConcurrency, 1, std::nullopt,
              kScheduleStart);
  s.set_stage(concurrency_stage(flat(4), 10.0, 0), 1, kScheduleStart);
  CHECK(s.due(kScheduleStart, 0).size() == 4);
  // The next stage (2 slots) starts at 10 s with 4 conversations still running.
  s.set_stage(concurrency_stage(flat(2), 10.0, 1), 1, kScheduleStart + 10 * kS);
  CHECK(s.due(kScheduleStart + 10 * kS, 0).empty());
  s.on_end(kScheduleStart + 11 * kS);  // 3 left
  s.on_end(kScheduleStart + 12 * kS);  // 2 left: still at the level
  CHECK(s.due(kScheduleStart + 12 * kS, 0).empty());
  s.on_end(kScheduleStart + 13 * kS);  // 1 left: one slot frees
  const auto d = s.due(kScheduleStart + 13 * kS, 0);
  REQUIRE(d.size() == 1);
  CHECK(d[0].intended_ns == kScheduleStart + 13 * kS);
  CHECK(d[0].seq == 4);  // conversation indexes continue across stages
  CHECK(s.in_flight() == 2);

  SUBCASE("a rise opens slots at the stage start") {
    s.set_stage(concurrency_stage(flat(5), 10.0, 2), 1, kScheduleStart + 20 * kS);
    const auto more = s.due(kScheduleStart + 20 * kS + 5 * kMs, 0);
    REQUIRE(more.size() == 3);
    for (const auto& m : more) CHECK(m.intended_ns == kScheduleStart + 20 * kS);
  }
  SUBCASE("paused (a settle) nothing starts, even with free slots") {
    s.on_end(kScheduleStart + 14 * kS);
    s.pause();
    CHECK(s.due(kScheduleStart + 14 * kS, 0).empty());
    CHECK_FALSE(s.next_intended_ns().has_value());
  }
}

TEST_CASE("stage schedule: a stage's end bounds what it dispatches") {
  SUBCASE("duration: nothing intended at or after the end, whatever the lookahead") {
    Scheduler s(schedule_concurrency_load(1), LoadMode::kConcurrency, 1, std::nullopt,
                kScheduleStart);
    s.set_stage(rate_stage(flat(10), 1.0), 1, kScheduleStart);
    const auto d = s.due(kScheduleStart + 5 * kS, 10 * kS);
    CHECK(d.size() == 10);  // 0, 0.1, ... 0.9 s
    CHECK(d.back().intended_ns == kScheduleStart + 900 * kMs);
  }
  SUBCASE("sessions: at most that many") {
    Scheduler s(schedule_concurrency_load(1), LoadMode::kConcurrency, 1, std::nullopt,
                kScheduleStart);
    StageConfig st = rate_stage(flat(100), 1.0);
    st.duration_s.reset();
    st.sessions = 7;
    s.set_stage(st, 1, kScheduleStart);
    CHECK(s.due(kScheduleStart + 5 * kS, 0).size() == 7);
    CHECK(s.stage_dispatched() == 7);
  }
  SUBCASE("a rate stage's cap holds conversations back without moving their times") {
    Scheduler s(schedule_concurrency_load(1), LoadMode::kConcurrency, 1, std::nullopt,
                kScheduleStart);
    s.set_stage(rate_stage(flat(10), 10.0, Arrival::kConstant, 0, /*cap=*/2), 1, kScheduleStart);
    CHECK(s.due(kScheduleStart + kS, 0).size() == 2);
    s.on_end(kScheduleStart + kS);
    const auto d = s.due(kScheduleStart + kS, 0);
    REQUIRE(d.size() == 1);
    CHECK(d[0].intended_ns == kScheduleStart + 200 * kMs);  // late: schedule lag shows it
  }
}

TEST_CASE("stage schedule: intended times are a function of seed, index and the profile only") {
  // A three-stage profile (concurrency ramp, poisson rate ramp, gamma spike) driven on a
  // hand-advanced clock with the same conversation lengths: the (seq, intended) pairs every
  // worker receives are the same whatever the number of workers, and another seed changes them.
  using Entry = std::pair<uint64_t, int64_t>;
  const std::vector<StageConfig> profile = [] {
    std::vector<StageConfig> p{concurrency_stage(ramp(2, 6), 3.0, 0),
                               rate_stage(ramp(20, 120), 3.0, Arrival::kPoisson, 1, 16),
                               rate_stage(flat(300), 1.0, Arrival::kGamma, 2, 32)};
    p[2].burstiness = 0.5;
    return p;
  }();
  auto duration = [](uint64_t seq) { return static_cast<int64_t>(30 + (seq * 37) % 120) * kMs; };
  auto run_with = [&](uint64_t seed, int workers) {
    Sharder sharder;
    for (int i = 0; i < workers; ++i) sharder.add_worker("w" + std::to_string(i));
    std::map<std::string, std::vector<Entry>> per_worker;
    Scheduler s(schedule_concurrency_load(1), LoadMode::kConcurrency, seed, std::nullopt,
                kScheduleStart);
    using End = std::pair<int64_t, uint64_t>;
    std::priority_queue<End, std::vector<End>, std::greater<>> ends;
    size_t stage = 0;
    int64_t stage_start = kScheduleStart;
    s.set_stage(profile[0], seed, kScheduleStart);
    for (int64_t now = kScheduleStart; now < kScheduleStart + 8 * kS; now += kMs) {
      while (!ends.empty() && ends.top().first <= now) {
        s.on_end(ends.top().first);
        ends.pop();
      }
      const int64_t end = stage_start + std::llround(*profile[stage].duration_s * 1e9);
      if (now >= end && stage + 1 < profile.size()) {
        stage_start = end;
        s.set_stage(profile[++stage], seed, stage_start);
      }
      for (const Dispatch& d : s.due(now, 100 * kMs)) {
        per_worker[sharder.pick(convoy::controller::correlation_id(seed, d.seq))].push_back(
            {d.seq, d.intended_ns});
        ends.push({std::max(now, d.intended_ns) + duration(d.seq), d.seq});
      }
    }
    std::vector<Entry> all;
    for (const auto& [w, entries] : per_worker) {
      all.insert(all.end(), entries.begin(), entries.end());
    }
    std::sort(all.begin(), all.end());
    return all;
  };
  const std::vector<Entry> one = run_with(99, 1);
  REQUIRE(one.size() > 300);
  for (size_t i = 0; i < one.size(); ++i) CHECK(one[i].first == i);
  CHECK(run_with(99, 3) == one);
  CHECK(run_with(99, 8) == one);
  CHECK(run_with(100, 1) != one);
}
