// The trials interval: Student's t quantiles against the printed table, the interval's arithmetic,
// and its coverage: trial values drawn from a known distribution over 1,000 seeds must be covered
// at the stated 95% within the binomial bounds of 1,000 draws.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "controller/report/trial_intervals.hpp"

using convoy::controller::student_t_quantile;
using convoy::controller::t_interval;

TEST_CASE("Student t quantiles match the printed table") {
  // t(0.975, df), as every statistics table prints them (3 decimals).
  const std::pair<double, double> table[] = {{1, 12.706}, {2, 4.303},  {3, 3.182},  {4, 2.776},
                                             {5, 2.571},  {9, 2.262},  {10, 2.228}, {29, 2.045},
                                             {30, 2.042}, {120, 1.980}};
  for (const auto& [df, t] : table) {
    CAPTURE(df);
    CHECK(student_t_quantile(0.975, df) == doctest::Approx(t).epsilon(0.0005));
  }
  CHECK(student_t_quantile(0.995, 4) == doctest::Approx(4.604).epsilon(0.0005));
  CHECK(student_t_quantile(0.025, 5) == doctest::Approx(-2.571).epsilon(0.0005));
  CHECK(student_t_quantile(0.5, 7) == 0);
  // Very many degrees of freedom: the normal's 1.959964.
  CHECK(student_t_quantile(0.975, 1e6) == doctest::Approx(1.959964).epsilon(1e-5));
}

TEST_CASE("the t interval is mean +/- t * s / sqrt(n)") {
  const std::vector<double> values = {10, 12, 14};
  const auto in = t_interval(values);
  REQUIRE(in.has_value());
  CHECK(in->n == 3);
  CHECK(in->mean == doctest::Approx(12));
  CHECK(in->stddev == doctest::Approx(2));
  const double half = 4.302653 * 2 / std::sqrt(3.0);
  CHECK(in->low == doctest::Approx(12 - half).epsilon(1e-6));
  CHECK(in->high == doctest::Approx(12 + half).epsilon(1e-6));

  SUBCASE("one value: no spread, the interval is the value") {
    const std::vector<double> one = {7.5};
    const auto o = t_interval(one);
    REQUIRE(o.has_value());
    CHECK(o->low == 7.5);
    CHECK(o->high == 7.5);
  }
  SUBCASE("non-finite values are skipped, none at all is nothing") {
    const std::vector<double> some = {1, NAN, 3, INFINITY};
    CHECK(t_interval(some)->n == 2);
    const std::vector<double> none = {NAN};
    CHECK_FALSE(t_interval(none).has_value());
    CHECK_FALSE(t_interval(std::vector<double>{}).has_value());
  }
}

namespace {

constexpr int kCoverageSeeds = 1000;
// 1,000 draws of a 95% event: mean 950, sd sqrt(1000 * 0.95 * 0.05) = 6.9; four sd either side.
constexpr int kCoveredLow = 922;
constexpr int kCoveredHigh = 978;

// How many of kCoverageSeeds intervals over `trials` values from `draw_trial` cover `truth`.
template <class Draw>
int covered_count(int trials, double truth, Draw draw_trial) {
  int covered = 0;
  for (int seed = 0; seed < kCoverageSeeds; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 7919 + 1);
    std::vector<double> values;
    for (int t = 0; t < trials; ++t) values.push_back(draw_trial(rng));
    const auto in = t_interval(values);
    REQUIRE(in.has_value());
    if (in->low <= truth && truth <= in->high) ++covered;
  }
  return covered;
}

}  // namespace

TEST_CASE("the t interval covers a known mean at 95% over 1,000 seeds") {
  // A server whose per-trial throughput is normal around 100 req/s with sd 10.
  for (int trials : {3, 5, 10}) {
    CAPTURE(trials);
    const int covered = covered_count(trials, 100.0, [](std::mt19937_64& rng) {
      return std::normal_distribution<double>(100.0, 10.0)(rng);
    });
    CHECK(covered >= kCoveredLow);
    CHECK(covered <= kCoveredHigh);
  }
}

TEST_CASE("the t interval over per-trial medians covers the true median at 95%") {
  // A server of known variance: TTFT = 20 ms + an exponential queueing delay of mean 5 ms, 401
  // requests per trial. The true median is 20 + 5 ln 2; each trial contributes its own sample
  // median (the nearest rank, as summary.json's p50), which is asymptotically normal.
  const double truth = 20.0 + 5.0 * std::log(2.0);
  for (int trials : {3, 5}) {
    CAPTURE(trials);
    const int covered = covered_count(trials, truth, [](std::mt19937_64& rng) {
      std::exponential_distribution<double> queue(1.0 / 5.0);
      std::vector<double> ttft(401);
      for (double& v : ttft) v = 20.0 + queue(rng);
      std::nth_element(ttft.begin(), ttft.begin() + 200, ttft.end());
      return ttft[200];
    });
    CHECK(covered >= kCoveredLow);
    CHECK(covered <= kCoveredHigh);
  }
}
