// The verdict's rate check (mode rate) across many seeds: schedules from the real Scheduler, judged
// by the real judge_run. A correct schedule must not warn on ordinary noise; a slow one must.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "controller/report/run_report.hpp"
#include "controller/run/registry.hpp"
#include "controller/run/schedule.hpp"
#include "test_time.hpp"

namespace {

using convoy::Arrival;
using convoy::Config;
using convoy::LoadConfig;
using convoy::LoadMode;
using convoy::controller::check_arrival_rate;
using convoy::controller::judge_run;
using convoy::controller::MetricsAggregator;
using convoy::controller::MetricsSnapshot;
using convoy::controller::ReportInputs;
using convoy::controller::RunFacts;
using convoy::controller::Scheduler;
using convoy::controller::Verdict;
using convoy::controller::VerdictStatus;
using convoy::controller::worker_summaries;
using convoy::controller::WorkerRegistry;

constexpr int64_t kRateStart = 100 * kS;

// Intended starts of a rate schedule over `duration_s`, from the Scheduler itself.
std::vector<int64_t> schedule_starts(double rate, Arrival arrival, double burstiness,
                                     double duration_s, uint64_t seed) {
  LoadConfig load;
  load.mode = LoadMode::kRate;
  load.rate = rate;
  load.arrival = arrival;
  load.burstiness = burstiness;
  load.concurrency = 1'000'000;  // no cap: the arrival process alone
  Scheduler scheduler(load, LoadMode::kRate, seed, std::nullopt, kRateStart);
  const auto end = kRateStart + static_cast<int64_t>(duration_s * 1e9);
  std::vector<int64_t> starts;
  for (const auto& d : scheduler.due(end, 0)) starts.push_back(d.intended_ns);
  return starts;
}

// One clean measured request, so that nothing but the rate check can warn.
MetricsSnapshot clean_snapshot() {
  MetricsAggregator agg{Config{}};
  convoy::proto::Record r;
  r.x_correlation_id = "cid";
  r.intended_ns = r.sent_ns = kRateStart;
  r.first_token_ns = kRateStart + 30 * kMs;
  r.last_token_ns = r.end_ns = kRateStart + 50 * kMs;
  r.output_tokens = 3;
  r.http_status = 200;
  agg.add(r);
  return agg.snapshot();
}

struct RateRun {
  Config config;
  std::string url = "http://127.0.0.1:8000";
  std::filesystem::path out_dir = "/nonexistent";
  WorkerRegistry registry;
  MetricsSnapshot snapshot = clean_snapshot();

  RateRun(double rate, Arrival arrival, double burstiness = 1.0) {
    config.load.mode = LoadMode::kRate;
    config.load.rate = rate;
    config.load.arrival = arrival;
    config.load.burstiness = burstiness;
  }

  Verdict judge(const std::vector<int64_t>& starts) const {
    RunFacts facts;
    for (int64_t t : starts) facts.actual_starts_ns.add(t);
    const ReportInputs in{config, url, out_dir, worker_summaries(registry), snapshot, facts, false,
                          false,  "",  {}};
    return judge_run(in);
  }

  // Warnings of `seeds` schedules run at `actual_rate` (the configured rate when 0).
  int warns(uint64_t seeds, double duration_s, double actual_rate = 0) const {
    int n = 0;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      const auto starts =
          schedule_starts(actual_rate > 0 ? actual_rate : config.load.rate, config.load.arrival,
                          config.load.burstiness, duration_s, seed);
      if (judge(starts).status != VerdictStatus::kPass) ++n;
    }
    return n;
  }
};

}  // namespace

TEST_CASE("rate check: a correct poisson schedule warns at most 1 percent of the time") {
  // The case: 3 s at 20/s. The old 5% band alone warned 721 of these 1,000 seeds.
  const RateRun run(20, Arrival::kPoisson);
  const int short_warns = run.warns(1000, 3);
  MESSAGE("poisson 20/s, 3 s: ", short_warns, " warnings in 1000 seeds");
  CHECK(short_warns <= 10);
  const int long_warns = run.warns(1000, 60);  // 1,200 arrivals each
  MESSAGE("poisson 20/s, 60 s: ", long_warns, " warnings in 1000 seeds");
  CHECK(long_warns <= 10);
  const RateRun fast(100, Arrival::kPoisson);
  const int fast_warns = fast.warns(1000, 5);
  MESSAGE("poisson 100/s, 5 s: ", fast_warns, " warnings in 1000 seeds");
  CHECK(fast_warns <= 10);
}

TEST_CASE("rate check: a correct gamma schedule warns at most 1 percent of the time") {
  // Burstier than poisson: its count spreads more (variance mean / shape).
  const RateRun run(20, Arrival::kGamma, 0.5);
  const int warns = run.warns(1000, 3);
  MESSAGE("gamma(0.5) 20/s, 3 s: ", warns, " warnings in 1000 seeds");
  CHECK(warns <= 10);
}

TEST_CASE("rate check: a schedule 20 percent too slow warns") {
  const RateRun run(20, Arrival::kPoisson);
  CHECK(run.warns(200, 60, 16) == 200);
  const Verdict v = run.judge(schedule_starts(16, Arrival::kPoisson, 1, 60, 7));
  CHECK(v.status == VerdictStatus::kWarn);
  CHECK(v.achieved_rate_per_s == doctest::Approx(16).epsilon(0.1));
  bool rate_reason = false;
  for (const auto& r : v.reasons) rate_reason |= r.find("conversations/s vs") != std::string::npos;
  CHECK(rate_reason);
  // Half the rate is caught within 20 s (on 3 s it is within the noise of 30 arrivals).
  CHECK(run.warns(200, 20, 10) == 200);
}

TEST_CASE("rate check: constant arrivals use the 5 percent band") {
  const RateRun run(20, Arrival::kConstant);
  CHECK(run.warns(1, 3) == 0);
  CHECK(run.warns(1, 3, 19.6) == 0);   // 2% slow: within the band
  CHECK(run.warns(1, 3, 16) == 1);     // 20% slow
  CHECK(run.warns(1, 60, 18.5) == 1);  // 7.5% slow
}

TEST_CASE("rate check: the expected count and its allowance") {
  // 3 s at 20/s that achieved 17.9/s: 53 arrivals where 59.2 were expected, well within the
  // 23 (3 sigma) a poisson count spreads; the old check warned (10.5% off).
  const auto c = check_arrival_rate(Arrival::kPoisson, 20, 1, 54, 2'960 * kMs);
  CHECK(c.computed);
  CHECK(c.observed_count == 53);
  CHECK(c.achieved_per_s == doctest::Approx(17.9).epsilon(0.01));
  CHECK(c.expected_count == doctest::Approx(59.2));
  CHECK(c.allowed_deviation == doctest::Approx(3 * std::sqrt(59.2)));
  CHECK_FALSE(c.warn);
  // Long runs: the 5% band is the larger allowance and a 6% shortfall warns.
  const auto longer = check_arrival_rate(Arrival::kPoisson, 1000, 1, 94'001, 100 * kS);
  CHECK(longer.allowed_deviation == doctest::Approx(5000));
  CHECK(longer.warn);
  // Gamma spreads as sqrt(mean / shape); constant gets a small absolute allowance.
  CHECK(check_arrival_rate(Arrival::kGamma, 20, 0.25, 61, 3 * kS).allowed_deviation ==
        doctest::Approx(3 * std::sqrt(60 / 0.25)));
  CHECK(check_arrival_rate(Arrival::kConstant, 20, 1, 21, kS).allowed_deviation ==
        doctest::Approx(2));
  // Too few starts: computed but never a warning.
  const auto few = check_arrival_rate(Arrival::kConstant, 20, 1, 10, 9 * kS);
  CHECK(few.computed);
  CHECK_FALSE(few.warn);
  CHECK_FALSE(check_arrival_rate(Arrival::kPoisson, 20, 1, 1, kS).computed);
  CHECK_FALSE(check_arrival_rate(Arrival::kPoisson, 20, 1, 5, 0).computed);
}
