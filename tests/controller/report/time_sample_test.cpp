// TimeSample, the bounded sample of conversation starts behind the verdict's rate and KS checks:
// its memory is allocated once and never grows, and what it keeps still tests the gaps.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "controller/report/run_report.hpp"

namespace {

using convoy::Arrival;
using convoy::controller::ks_p_value;
using convoy::controller::ks_statistic;
using convoy::controller::RunFacts;
using convoy::controller::TimeSample;

TEST_CASE("TimeSample keeps the earliest times in storage allocated once") {
  TimeSample sample(100);
  const int64_t* storage = sample.storage();
  CHECK(sample.capacity() == 100);

  std::vector<int64_t> times(10'000);
  std::iota(times.begin(), times.end(), 1);
  std::shuffle(times.begin(), times.end(), std::mt19937_64(7));
  for (const int64_t t : times) sample.add(t * 1000);

  CHECK(sample.storage() == storage);  // never reallocated
  CHECK(sample.capacity() == 100);
  CHECK(sample.size() == 100);
  CHECK(sample.count == 10'000);
  CHECK(sample.first_ns == 1000);
  CHECK(sample.last_ns == 10'000'000);
  std::vector<int64_t> earliest(100);
  std::iota(earliest.begin(), earliest.end(), 1);
  for (auto& t : earliest) t *= 1000;
  CHECK(sample.samples() == earliest);
}

TEST_CASE("TimeSample with capacity 0 keeps only the count and extent") {
  TimeSample sample(0);
  for (int64_t t : {5, 3, 9}) sample.add(t);
  CHECK(sample.size() == 0);
  CHECK(sample.samples().empty());
  CHECK(sample.count == 3);
  CHECK(sample.first_ns == 3);
  CHECK(sample.last_ns == 9);
}

TEST_CASE("RunFacts samples actual starts into fixed storage and keeps no intended times") {
  RunFacts facts;
  CHECK(facts.intended_starts_ns.capacity() == 0);
  CHECK(facts.actual_starts_ns.capacity() == TimeSample::kMaxSamples);
  const int64_t* storage = facts.actual_starts_ns.storage();
  convoy::proto::Record r;
  r.phase = convoy::proto::Phase::kMeasure;
  r.turn_index = 0;
  const auto n = static_cast<int64_t>(TimeSample::kMaxSamples) + 1000;
  for (int64_t i = n; i > 0; --i) {  // latest first: every add past capacity replaces one
    r.sent_ns = i;
    facts.add(r);
  }
  CHECK(facts.actual_starts_ns.storage() == storage);
  CHECK(facts.actual_starts_ns.size() == TimeSample::kMaxSamples);
  CHECK(facts.actual_starts_ns.count == n);
  const auto kept = facts.actual_starts_ns.samples();
  CHECK(kept.front() == 1);
  CHECK(kept.back() == static_cast<int64_t>(TimeSample::kMaxSamples));
}

TEST_CASE("the earliest starts of a poisson schedule seen in completion order keep its gaps") {
  // 20,000 poisson starts at 100/s, each arriving after a latency of up to 2 s (200 gaps), so
  // arrival order is not start order; a sample of 5,000 must still test as poisson.
  constexpr double kRatePerS = 100;
  constexpr size_t kStarts = 20'000;
  constexpr size_t kKept = 5'000;
  std::mt19937_64 rng(11);
  std::exponential_distribution<double> gap_s(kRatePerS);
  std::uniform_real_distribution<double> latency_s(0, 2);
  struct Start {
    int64_t start_ns;
    int64_t done_ns;
  };
  std::vector<Start> starts;
  double t_s = 1;
  for (size_t i = 0; i < kStarts; ++i) {
    t_s += gap_s(rng);
    starts.push_back(
        {static_cast<int64_t>(t_s * 1e9), static_cast<int64_t>((t_s + latency_s(rng)) * 1e9)});
  }
  std::sort(starts.begin(), starts.end(),
            [](const Start& a, const Start& b) { return a.done_ns < b.done_ns; });
  TimeSample sample(kKept);
  for (const auto& s : starts) sample.add(s.start_ns);

  const auto kept = sample.samples();
  REQUIRE(kept.size() == kKept);
  std::vector<int64_t> by_start;
  for (const auto& s : starts) by_start.push_back(s.start_ns);
  std::sort(by_start.begin(), by_start.end());
  CHECK(std::equal(kept.begin(), kept.end(), by_start.begin()));  // a contiguous stretch

  std::vector<int64_t> gaps;
  for (size_t i = 1; i < kept.size(); ++i) gaps.push_back(kept[i] - kept[i - 1]);
  const double d = ks_statistic(gaps, Arrival::kPoisson, kRatePerS, 1);
  REQUIRE(d >= 0);
  CHECK(ks_p_value(d, gaps.size()) > 0.05);
}

}  // namespace
