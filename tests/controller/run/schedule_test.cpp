// Schedules as pure functions of config, seed and a hand-advanced clock: arrival processes, and the
// rate, concurrency and trace schedules. Load profiles (stages and ramps) are in
// schedule_stage_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/dataset/ids.hpp"
#include "controller/run/schedule.hpp"
#include "controller/run/sharding.hpp"
#include "schedule_test_util.hpp"
#include "test_time.hpp"

using convoy::Arrival;
using convoy::LoadConfig;
using convoy::LoadMode;
using convoy::controller::ArrivalProcess;
using convoy::controller::Dispatch;
using convoy::controller::Scheduler;
using convoy::controller::Sharder;
using convoy::test::kScheduleStart;
using convoy::test::schedule_concurrency_load;

namespace {

LoadConfig rate_load(double rate, Arrival arrival, int64_t cap = 1'000'000,
                     double burstiness = 1.0) {
  LoadConfig load;
  load.mode = LoadMode::kRate;
  load.rate = rate;
  load.arrival = arrival;
  load.concurrency = cap;
  load.burstiness = burstiness;
  return load;
}

struct GapStats {
  double mean_ns = 0;
  double cv = 0;  // stddev / mean
};

GapStats gap_stats(ArrivalProcess& arrivals, int draws) {
  CHECK(arrivals.next_gap_ns() == 0);  // the first arrival is at the start
  double sum = 0;
  double sum_sq = 0;
  int negative = 0;
  for (int i = 0; i < draws; ++i) {
    double g = static_cast<double>(arrivals.next_gap_ns());
    if (g < 0) ++negative;
    sum += g;
    sum_sq += g * g;
  }
  CHECK(negative == 0);
  double n = static_cast<double>(draws);
  double mean = sum / n;
  double var = sum_sq / n - mean * mean;
  return {mean, std::sqrt(var) / mean};
}

std::vector<int64_t> intended_times(const std::vector<Dispatch>& ds) {
  std::vector<int64_t> out;
  for (const auto& d : ds) out.push_back(d.intended_ns);
  return out;
}

// Drives a scheduler on a hand-advanced clock in 1 ms steps until it is exhausted and every
// conversation ended; conversation `seq` lasts duration(seq) from max(now, intended). Each
// dispatch is handed to `on_dispatch`. Returns the peak in-flight count seen.
int64_t simulate(Scheduler& s, int64_t lookahead_ns,
                 const std::function<int64_t(uint64_t)>& duration,
                 const std::function<void(const Dispatch&, int64_t now)>& on_dispatch) {
  using End = std::pair<int64_t, uint64_t>;  // (end time, seq)
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  int64_t peak = 0;
  int64_t now = kScheduleStart;
  for (int step = 0; step < 2'000'000 && !(s.exhausted() && ends.empty()); ++step, now += kMs) {
    while (!ends.empty() && ends.top().first <= now) {
      s.on_end(ends.top().first);
      ends.pop();
    }
    for (const Dispatch& d : s.due(now, lookahead_ns)) {
      on_dispatch(d, now);
      ends.push({std::max(now, d.intended_ns) + duration(d.seq), d.seq});
    }
    peak = std::max(peak, s.in_flight());
    CHECK(s.in_flight() == static_cast<int64_t>(ends.size()));
  }
  CHECK(ends.empty());
  return peak;
}

}  // namespace

TEST_CASE("arrival process: constant, poisson and gamma gaps") {
  SUBCASE("constant rate spaces arrivals exactly 1/rate apart") {
    for (double rate : {10.0, 7.0, 2000.0}) {
      ArrivalProcess a(rate_load(rate, Arrival::kConstant), 42);
      CHECK(a.next_gap_ns() == 0);
      const auto gap = static_cast<int64_t>(std::llround(1e9 / rate));
      for (int i = 0; i < 1000; ++i) CHECK(a.next_gap_ns() == gap);
    }
  }

  SUBCASE("poisson: mean gap 1/rate and coefficient of variation 1") {
    ArrivalProcess a(rate_load(500, Arrival::kPoisson), 7);
    GapStats st = gap_stats(a, 200'000);
    CHECK(st.mean_ns == doctest::Approx(2.0 * kMs).epsilon(0.02));
    CHECK(st.cv == doctest::Approx(1.0).epsilon(0.03));
  }

  SUBCASE("gamma: mean gap 1/rate whatever the shape, and CV = 1/sqrt(burstiness)") {
    for (double shape : {0.25, 1.0, 4.0}) {
      INFO("burstiness " << shape);
      ArrivalProcess a(rate_load(500, Arrival::kGamma, 1'000'000, shape), 11);
      GapStats st = gap_stats(a, 200'000);
      CHECK(st.mean_ns == doctest::Approx(2.0 * kMs).epsilon(0.02));
      CHECK(st.cv == doctest::Approx(1.0 / std::sqrt(shape)).epsilon(0.03));
    }
  }

  SUBCASE("the same seed gives the same gaps; another seed different ones") {
    ArrivalProcess a(rate_load(100, Arrival::kGamma, 1'000'000, 0.5), 99);
    ArrivalProcess b(rate_load(100, Arrival::kGamma, 1'000'000, 0.5), 99);
    ArrivalProcess c(rate_load(100, Arrival::kGamma, 1'000'000, 0.5), 100);
    int differ = 0;
    for (int i = 0; i < 1000; ++i) {
      int64_t ga = a.next_gap_ns();
      CHECK(ga == b.next_gap_ns());
      if (ga != c.next_gap_ns()) ++differ;
    }
    CHECK(differ > 990);
  }
}

TEST_CASE("rate schedule: intended times are fixed in advance") {
  SUBCASE("constant rate: intended start i is start + i/rate") {
    Scheduler s(rate_load(10, Arrival::kConstant), LoadMode::kRate, 1, 50, kScheduleStart);
    auto ds = s.due(kScheduleStart + 10 * kS, 0);
    REQUIRE(ds.size() == 50);
    for (size_t i = 0; i < ds.size(); ++i) {
      CHECK(ds[i].seq == i);
      CHECK(ds[i].intended_ns == kScheduleStart + static_cast<int64_t>(i) * 100 * kMs);
    }
    CHECK(s.exhausted());
    CHECK(s.due(kScheduleStart + 20 * kS, kS).empty());
  }

  SUBCASE("a late caller gets the original times, not times stretched to now") {
    Scheduler s(rate_load(100, Arrival::kPoisson), LoadMode::kRate, 5, 200, kScheduleStart);
    Scheduler reference(rate_load(100, Arrival::kPoisson), LoadMode::kRate, 5, 200, kScheduleStart);
    std::vector<int64_t> late;
    // Called rarely and late (every 700 ms)...
    for (int64_t now = kScheduleStart; !s.exhausted() && now < kScheduleStart + 100 * kS;
         now += 700 * kMs) {
      for (auto t : intended_times(s.due(now, 0))) late.push_back(t);
    }
    // ...versus called every millisecond.
    std::vector<int64_t> prompt;
    for (int64_t now = kScheduleStart; !reference.exhausted() && now < kScheduleStart + 100 * kS;
         now += kMs) {
      for (auto t : intended_times(reference.due(now, 0))) prompt.push_back(t);
    }
    CHECK(late.size() == 200);
    CHECK(late == prompt);
  }

  SUBCASE("lookahead releases exactly the conversations intended within the window") {
    Scheduler s(rate_load(10, Arrival::kConstant), LoadMode::kRate, 1, 10, kScheduleStart);
    auto first = s.due(kScheduleStart, 250 * kMs);
    CHECK(intended_times(first) == std::vector<int64_t>{kScheduleStart, kScheduleStart + 100 * kMs,
                                                        kScheduleStart + 200 * kMs});
    REQUIRE(s.next_intended_ns().has_value());
    CHECK(*s.next_intended_ns() == kScheduleStart + 300 * kMs);
    CHECK(
        s.due(kScheduleStart + 49 * kMs, 250 * kMs).empty());  // 300 ms is still beyond the window
    auto edge = s.due(kScheduleStart + 50 * kMs, 250 * kMs);   // the window's edge is inclusive
    REQUIRE(edge.size() == 1);
    CHECK(edge[0].seq == 3);
    CHECK(edge[0].intended_ns == kScheduleStart + 300 * kMs);
    CHECK(s.dispatched() == 4);
    // Without lookahead nothing leaves before its time.
    CHECK(s.due(kScheduleStart + 399 * kMs, 0).empty());
    CHECK(s.due(kScheduleStart + 400 * kMs, 0).size() == 1);
  }

  SUBCASE("a concurrency cap holds conversations back and keeps their intended times") {
    // 100/s (10 ms apart) with at most 2 in flight; the caller only comes back at +1 s.
    Scheduler s(rate_load(100, Arrival::kConstant, 2), LoadMode::kRate, 1, 5, kScheduleStart);
    const int64_t now = kScheduleStart + kS;
    auto ds = s.due(now, 0);
    CHECK(intended_times(ds) == std::vector<int64_t>{kScheduleStart, kScheduleStart + 10 * kMs});
    CHECK(s.in_flight() == 2);
    CHECK(s.due(now, kS).empty());  // held back by the cap, not by time
    CHECK_FALSE(s.exhausted());

    s.on_end(now);
    auto third = s.due(now, 0);
    REQUIRE(third.size() == 1);
    CHECK(third[0].seq == 2);
    CHECK(third[0].intended_ns == kScheduleStart + 20 * kMs);  // the original time...
    CHECK(now - third[0].intended_ns == 980 * kMs);            // ...so the lag is visible

    s.on_end(now + kMs);
    s.on_end(now + 2 * kMs);
    CHECK(intended_times(s.due(now + 3 * kMs, 0)) ==
          std::vector<int64_t>{kScheduleStart + 30 * kMs, kScheduleStart + 40 * kMs});
    CHECK(s.exhausted());
    CHECK(s.in_flight() == 2);
  }

  SUBCASE("with a cap, in flight never exceeds it across a whole run") {
    Scheduler s(rate_load(1000, Arrival::kPoisson, 3), LoadMode::kRate, 3, 300, kScheduleStart);
    int64_t max_lag = 0;
    int64_t peak = simulate(
        s, 0, [](uint64_t seq) { return static_cast<int64_t>(2 + seq % 7) * kMs; },
        [&](const Dispatch& d, int64_t now) { max_lag = std::max(max_lag, now - d.intended_ns); });
    CHECK(peak == 3);
    CHECK(s.dispatched() == 300);
    CHECK(max_lag > 10 * kMs);  // 1000/s with 3 slots of ~5 ms cannot keep up: lag shows it
  }

  SUBCASE("without a total the schedule runs until stop()") {
    Scheduler s(rate_load(1000, Arrival::kConstant), LoadMode::kRate, 1, std::nullopt,
                kScheduleStart);
    CHECK(s.due(kScheduleStart + kS, 0).size() == 1001);
    CHECK_FALSE(s.exhausted());
    s.stop();
    CHECK(s.exhausted());
    CHECK_FALSE(s.next_intended_ns().has_value());
    CHECK(s.due(kScheduleStart + 2 * kS, kS).empty());
    CHECK(s.dispatched() == 1001);
  }
}

TEST_CASE("concurrency schedule: at most N in flight, the next starts when one ends") {
  SUBCASE("the first N start at once, at the start time") {
    Scheduler s(schedule_concurrency_load(4), LoadMode::kConcurrency, 1, 10, kScheduleStart);
    auto ds = s.due(kScheduleStart, 0);
    CHECK(ds.size() == 4);
    for (const auto& d : ds) CHECK(d.intended_ns == kScheduleStart);
    CHECK(s.in_flight() == 4);
    CHECK(s.due(kScheduleStart + kS, kS).empty());
    CHECK_FALSE(s.next_intended_ns().has_value());
  }

  SUBCASE("on_end frees one slot, intended at the moment it freed") {
    Scheduler s(schedule_concurrency_load(2), LoadMode::kConcurrency, 1, 10, kScheduleStart);
    REQUIRE(s.due(kScheduleStart, 0).size() == 2);
    s.on_end(kScheduleStart + 30 * kMs);
    CHECK(s.in_flight() == 1);
    // The caller comes late; the intended time is still when the slot freed.
    auto ds = s.due(kScheduleStart + 45 * kMs, 0);
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].seq == 2);
    CHECK(ds[0].intended_ns == kScheduleStart + 30 * kMs);
    // Two slots free before the caller returns: each keeps its own time, earliest first.
    s.on_end(kScheduleStart + 70 * kMs);
    s.on_end(kScheduleStart + 60 * kMs);
    CHECK(intended_times(s.due(kScheduleStart + 80 * kMs, 0)) ==
          std::vector<int64_t>{kScheduleStart + 60 * kMs, kScheduleStart + 70 * kMs});
    CHECK(s.in_flight() == 2);
  }

  SUBCASE("exhausted after `total`; the last ends drain in flight to zero") {
    Scheduler s(schedule_concurrency_load(3), LoadMode::kConcurrency, 1, 4, kScheduleStart);
    CHECK(s.due(kScheduleStart, 0).size() == 3);
    s.on_end(kScheduleStart + kMs);
    CHECK(s.due(kScheduleStart + kMs, 0).size() == 1);
    CHECK(s.exhausted());
    for (int i = 0; i < 2; ++i) s.on_end(kScheduleStart + 2 * kMs);
    CHECK(s.due(kScheduleStart + 3 * kMs, 0).empty());
    CHECK(s.in_flight() == 1);
    s.on_end(kScheduleStart + 4 * kMs);
    CHECK(s.in_flight() == 0);
    s.on_end(kScheduleStart + 5 * kMs);  // a stray end never goes negative
    CHECK(s.in_flight() == 0);
  }

  SUBCASE("over a whole run: never more than N, and every start is an end's time") {
    for (int64_t n : {1, 4, 16}) {
      INFO("concurrency " << n);
      Scheduler s(schedule_concurrency_load(n), LoadMode::kConcurrency, 1, 200, kScheduleStart);
      auto duration = [](uint64_t seq) {
        return static_cast<int64_t>(3 + (seq * 7919) % 11) * kMs;
      };
      std::multiset<int64_t> starts;
      std::multiset<int64_t> ends;
      int64_t peak = simulate(s, 0, duration, [&](const Dispatch& d, int64_t now) {
        starts.insert(d.intended_ns);
        ends.insert(std::max(now, d.intended_ns) + duration(d.seq));
      });
      CHECK(peak == n);
      CHECK(s.dispatched() == 200);
      CHECK(starts.count(kScheduleStart) == static_cast<size_t>(n));
      // Every later start is intended at the very moment some conversation ended.
      starts.erase(kScheduleStart);
      CHECK(starts.size() == static_cast<size_t>(200 - n));
      for (int64_t t : starts) {
        auto it = ends.find(t);
        CHECK_MESSAGE(it != ends.end(), "a start at no end's time: " << t);
        if (it != ends.end()) ends.erase(it);
      }
    }
  }
}

TEST_CASE("trace schedule: intended times from the dataset's offsets") {
  const std::vector<int64_t> offsets = {0, 5 * kMs, 5 * kMs, 2 * kS};
  auto offset_of = [&](uint64_t seq) { return offsets[seq]; };
  LoadConfig load;
  load.mode = LoadMode::kTrace;
  load.concurrency = 1'000;
  Scheduler s(load, LoadMode::kTrace, 1, offsets.size(), kScheduleStart, offset_of);

  SUBCASE("each conversation is intended at start + its offset") {
    auto first = s.due(kScheduleStart, 10 * kMs);
    CHECK(intended_times(first) ==
          std::vector<int64_t>{kScheduleStart, kScheduleStart + 5 * kMs, kScheduleStart + 5 * kMs});
    REQUIRE(s.next_intended_ns().has_value());
    CHECK(*s.next_intended_ns() == kScheduleStart + 2 * kS);
    CHECK(s.due(kScheduleStart + 1989 * kMs, 10 * kMs).empty());
    auto last = s.due(kScheduleStart + 1990 * kMs, 10 * kMs);
    REQUIRE(last.size() == 1);
    CHECK(last[0].seq == 3);
    CHECK(last[0].intended_ns == kScheduleStart + 2 * kS);
    CHECK(s.exhausted());
  }

  SUBCASE("no lookahead: only what is due by now") {
    CHECK(s.due(kScheduleStart + 5 * kMs - 1, 0).size() == 1);
    CHECK(s.due(kScheduleStart + 5 * kMs, 0).size() == 2);
  }

  SUBCASE("rows out of time order go out by intended time, each with its own seq") {
    // A trace file lists rows in any order: 0, 300, 150, 450 ms.
    const std::vector<int64_t> unsorted = {0, 300 * kMs, 150 * kMs, 450 * kMs};
    Scheduler t(load, LoadMode::kTrace, 1, unsorted.size(), kScheduleStart,
                [&](uint64_t seq) { return unsorted[seq]; });
    std::vector<Dispatch> got;
    for (int64_t now = kScheduleStart; !t.exhausted() && now < kScheduleStart + kS;
         now += 10 * kMs) {
      for (const Dispatch& d : t.due(now, 100 * kMs)) {
        CHECK(d.intended_ns - now <= 100 * kMs);  // never later than the lookahead promises
        if (d.intended_ns > kScheduleStart) CHECK(d.intended_ns - now > 80 * kMs);  // not held back
        got.push_back(d);
      }
    }
    REQUIRE(got.size() == 4);
    const uint64_t seqs[] = {0, 2, 1, 3};
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].seq == seqs[i]);
      CHECK(got[i].intended_ns == kScheduleStart + unsorted[got[i].seq]);
    }
  }

  SUBCASE("stop() ends it early") {
    CHECK(s.due(kScheduleStart, 0).size() == 1);
    s.stop();
    CHECK(s.exhausted());
    CHECK(s.due(kScheduleStart + 10 * kS, 0).empty());
    CHECK(s.dispatched() == 1);
  }
}

TEST_CASE("determinism: same seed, same (seq, intended) whatever the number of workers") {
  // Sharding happens after scheduling, so the worker count cannot change the schedule. Drive a
  // scheduler per worker count, shard each dispatch by its correlation id, and compare the union
  // of what every worker received.
  using Entry = std::pair<uint64_t, int64_t>;
  const uint64_t seed = 1234;
  const uint64_t total = 400;
  auto duration = [](uint64_t seq) { return static_cast<int64_t>(20 + (seq * 31) % 90) * kMs; };

  auto run_with = [&](LoadMode mode, const LoadConfig& load, int workers) {
    Sharder sharder;
    for (int i = 0; i < workers; ++i) sharder.add_worker("w" + std::to_string(i));
    std::map<std::string, std::vector<Entry>> per_worker;
    Scheduler s(load, mode, seed, total, kScheduleStart);
    simulate(s, 100 * kMs, duration, [&](const Dispatch& d, int64_t) {
      per_worker[sharder.pick(convoy::controller::correlation_id(seed, d.seq))].push_back(
          {d.seq, d.intended_ns});
    });
    CHECK(per_worker.size() == static_cast<size_t>(workers));  // every worker got some
    std::vector<Entry> all;
    for (const auto& [w, entries] : per_worker)
      all.insert(all.end(), entries.begin(), entries.end());
    std::sort(all.begin(), all.end());
    return all;
  };

  struct Case {
    const char* name;
    LoadMode mode;
    LoadConfig load;
  };
  const Case cases[] = {
      {"poisson rate", LoadMode::kRate, rate_load(200, Arrival::kPoisson)},
      {"gamma rate with a cap", LoadMode::kRate, rate_load(300, Arrival::kGamma, 8, 0.25)},
      {"concurrency", LoadMode::kConcurrency, schedule_concurrency_load(6)},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::vector<Entry> one = run_with(c.mode, c.load, 1);
    REQUIRE(one.size() == total);
    for (uint64_t i = 0; i < total; ++i) CHECK(one[i].first == i);  // each seq exactly once
    CHECK(run_with(c.mode, c.load, 2) == one);
    CHECK(run_with(c.mode, c.load, 7) == one);
  }

  SUBCASE("another seed gives another schedule") {
    Scheduler a(rate_load(200, Arrival::kPoisson), LoadMode::kRate, seed, 50, kScheduleStart);
    Scheduler b(rate_load(200, Arrival::kPoisson), LoadMode::kRate, seed + 1, 50, kScheduleStart);
    CHECK(intended_times(a.due(kScheduleStart + 100 * kS, 0)) !=
          intended_times(b.due(kScheduleStart + 100 * kS, 0)));
  }
}
