#include "common/histogram.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

namespace {

using convoy::Histogram;

constexpr double kPercentiles[] = {0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100};

int64_t exact_percentile(const std::vector<int64_t>& sorted, double p) {
  const int64_t rank = Histogram::nearest_rank(p, static_cast<int64_t>(sorted.size()));
  return sorted[static_cast<size_t>(rank - 1)];
}

// Every percentile within 0.1% (+ 1 unit) of the exact nearest-rank value; exact stats.
void check_against_exact(std::vector<int64_t> values) {
  Histogram h;
  for (int64_t v : values) h.record(v);
  std::sort(values.begin(), values.end());
  long double sum = 0;
  for (int64_t v : values) sum += static_cast<long double>(v);
  const long double mean = sum / static_cast<long double>(values.size());
  long double sq = 0;
  for (int64_t v : values)
    sq += (static_cast<long double>(v) - mean) * (static_cast<long double>(v) - mean);
  const double std_pop =
      static_cast<double>(std::sqrt(sq / static_cast<long double>(values.size())));

  CHECK(h.count() == static_cast<int64_t>(values.size()));
  CHECK(h.min() == values.front());
  CHECK(h.max() == values.back());
  CHECK(h.sum() == sum);
  CHECK(h.mean() == doctest::Approx(static_cast<double>(mean)).epsilon(1e-12));
  CHECK(h.stddev() == doctest::Approx(std_pop).epsilon(1e-9));
  for (double p : kPercentiles) {
    const int64_t exact = exact_percentile(values, p);
    const int64_t got = h.percentile(p);
    const double tolerance = std::abs(static_cast<double>(exact)) * 0.001 + 1;
    INFO("p", p, " exact ", exact, " got ", got);
    CHECK(std::abs(static_cast<double>(got - exact)) <= tolerance);
  }
}

std::vector<int64_t> draw(size_t n, uint64_t seed, int kind) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> out;
  out.reserve(n);
  std::lognormal_distribution<double> lognormal(std::log(2e8), 1.0);         // ~200 ms, wide
  std::uniform_int_distribution<int64_t> uniform(1'000, 3'600'000'000'000);  // 1 us .. 1 h
  std::exponential_distribution<double> exponential(1.0 / 5e6);              // ~5 ms gaps
  std::uniform_int_distribution<int64_t> tokens(1, 4096);
  std::normal_distribution<double> lag(0, 2e5);  // +-200 us
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0:
        out.push_back(std::clamp<int64_t>(std::llround(lognormal(rng)), 1'000, 3'600'000'000'000));
        break;
      case 1:
        out.push_back(uniform(rng));
        break;
      case 2:
        out.push_back(std::llround(exponential(rng)) + 1'000);
        break;
      case 3:
        out.push_back(tokens(rng));
        break;
      default:
        out.push_back(std::llround(lag(rng)));
        break;  // negative and positive
    }
  }
  return out;
}

}  // namespace

TEST_CASE("histogram percentiles match exact nearest-rank values within 0.1%") {
  SUBCASE("lognormal latencies") { check_against_exact(draw(100'000, 1, 0)); }
  SUBCASE("uniform 1 us .. 1 hour") { check_against_exact(draw(100'000, 2, 1)); }
  SUBCASE("exponential gaps") { check_against_exact(draw(100'000, 3, 2)); }
  SUBCASE("token counts are exact") {
    const auto values = draw(100'000, 4, 3);
    check_against_exact(values);
    Histogram h;
    for (int64_t v : values) h.record(v);
    auto sorted = values;
    std::sort(sorted.begin(), sorted.end());
    // Values below 1024 have their own bucket; larger ones are within 1/1024.
    CHECK(h.percentile(10) == exact_percentile(sorted, 10));
    CHECK(h.percentile(20) == exact_percentile(sorted, 20));
  }
  SUBCASE("signed values (schedule lag)") { check_against_exact(draw(100'000, 5, 4)); }
  SUBCASE("extremes of int64") {
    check_against_exact({INT64_MIN, -1, 0, 1, INT64_MAX, INT64_MAX - 1, 1'000'000'007});
  }
}

TEST_CASE("histogram bucket layout") {
  SUBCASE("buckets tile the value range without gaps") {
    int64_t expected_low = 0;
    for (int32_t i = 0; i < Histogram::kMaxBuckets; ++i) {
      REQUIRE(Histogram::bucket_lowest(i) == expected_low);
      REQUIRE(Histogram::bucket_index(Histogram::bucket_lowest(i)) == i);
      REQUIRE(Histogram::bucket_index(Histogram::bucket_highest(i)) == i);
      if (i + 1 < Histogram::kMaxBuckets) expected_low = Histogram::bucket_highest(i) + 1;
    }
    CHECK(Histogram::bucket_highest(Histogram::kMaxBuckets - 1) == INT64_MAX);
  }
  SUBCASE("bucket width is at most 1/512 of its lowest value") {
    for (int32_t i = static_cast<int32_t>(Histogram::kExactBelow); i < Histogram::kMaxBuckets;
         ++i) {
      const int64_t low = Histogram::bucket_lowest(i);
      const int64_t width = Histogram::bucket_highest(i) - low + 1;
      REQUIRE(width * 512 <= low);
    }
  }
}

TEST_CASE("histogram statistics") {
  SUBCASE("empty") {
    Histogram h;
    CHECK(h.empty());
    CHECK(h.count() == 0);
    CHECK(h.percentile(50) == 0);
    CHECK(h.mean() == 0);
    CHECK(h.stddev() == 0);
  }
  SUBCASE("record with a count equals repeated records") {
    Histogram a;
    Histogram b;
    a.record(12'345'678, 5);
    a.record(7, 3);
    for (int i = 0; i < 5; ++i) b.record(12'345'678);
    for (int i = 0; i < 3; ++i) b.record(7);
    CHECK(a.count() == b.count());
    CHECK(a.sum() == b.sum());
    CHECK(a.stddev() == doctest::Approx(b.stddev()));
    CHECK(a.percentile(50) == b.percentile(50));
    a.record(1, 0);
    a.record(1, -4);
    CHECK(a.count() == 8);
  }
  SUBCASE("population std of a known set") {
    Histogram h;
    for (int64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) h.record(v);
    CHECK(h.mean() == doctest::Approx(5.0));
    CHECK(h.stddev() == doctest::Approx(2.0));  // sample std would be 2.138
  }
  SUBCASE("nearest rank") {
    CHECK(Histogram::nearest_rank(50, 100) == 50);
    CHECK(Histogram::nearest_rank(99.9, 1000) == 999);
    CHECK(Histogram::nearest_rank(1, 10) == 1);
    CHECK(Histogram::nearest_rank(100, 10) == 10);
    CHECK(Histogram::nearest_rank(0.001, 10) == 1);
  }
  SUBCASE("sum is exact beyond double precision") {
    Histogram h;
    h.record(INT64_MAX, 4);
    h.record(1);
    const long double expected = 4.0L * static_cast<long double>(INT64_MAX) + 1.0L;
    CHECK(h.sum() == expected);
  }
}

TEST_CASE("histogram memory is bounded by value range, not count") {
  Histogram h;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> latency(1'000, 3'600'000'000'000);
  for (int i = 0; i < 1000; ++i) h.record(latency(rng));
  h.record(1'000);  // the range's both ends: nothing later grows it
  h.record(3'600'000'000'000);
  const size_t after_warm = h.memory_bytes();
  for (int i = 0; i < 200'000; ++i) h.record(latency(rng));
  CHECK(h.memory_bytes() == after_warm);
  CHECK(after_warm < 256 * 1024);
}

TEST_CASE("histogram memory spans the buckets seen, not zero to the largest") {
  // Before this bound a stage's histograms held every bucket from 0 up to its latencies (about
  // 9,000 counters each for 100 ms in ns), 0.7 MB for a stage of one request.
  Histogram one;
  one.record(100'000'000);
  CHECK(one.memory_bytes() <= sizeof(Histogram) + 4 * sizeof(int64_t));
  CHECK(one.percentile(50) == 100'000'000);
  SUBCASE("a descending series grows toward lower buckets in amortized constant time") {
    Histogram down;
    Histogram up;
    for (int64_t v = 4'000'000'000; v >= 1'000; v -= v / 64 + 1) down.record(v);
    for (int64_t v = 1'000; v <= 4'000'000'000; v += v / 64 + 1) up.record(v);
    CHECK(down.memory_bytes() < 3 * up.memory_bytes());
    for (double p : {1.0, 25.0, 50.0, 90.0, 99.9}) {
      const double ratio =
          static_cast<double>(down.percentile(p)) / static_cast<double>(up.percentile(p));
      CHECK(ratio == doctest::Approx(1).epsilon(0.05));
    }
  }
  SUBCASE("negative values too, and buckets are visited in value order") {
    Histogram h;
    for (int64_t v : {int64_t{-5'000'000}, int64_t{-3}, int64_t{7}, int64_t{9'000'000},
                      int64_t{-5'000'000}, int64_t{-70'000}}) {
      h.record(v);
    }
    std::vector<std::pair<int64_t, int64_t>> seen;
    h.for_each_bucket([&](int64_t lo, int64_t hi, int64_t n) {
      CHECK(lo <= hi);
      seen.push_back({lo, n});
    });
    REQUIRE(seen.size() == 5);
    CHECK(seen.front().second == 2);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
    CHECK(h.percentile(1) == -5'000'000);
    CHECK(h.percentile(100) == 9'000'000);
    // One counter per bucket between the smallest and largest magnitude seen, per sign (here
    // 3..5e6 and 7..9e6, about 15,000 counters), far below every bucket of both signs.
    const size_t spans =
        static_cast<size_t>(Histogram::bucket_index(5'000'000) - Histogram::bucket_index(3) + 1 +
                            Histogram::bucket_index(9'000'000) - Histogram::bucket_index(7) + 1);
    CHECK(h.memory_bytes() <= sizeof(Histogram) + spans * sizeof(int64_t));
    CHECK(h.memory_bytes() < 2 * static_cast<size_t>(Histogram::kMaxBuckets) * sizeof(int64_t) / 3);
  }
}

TEST_CASE("histogram record_all equals one record() per value") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> small(-5'000, 5'000);
  std::uniform_int_distribution<int64_t> gaps(1'000'000, 40'000'000);  // chunk gaps, ns
  Histogram one_by_one;
  Histogram batched;
  const std::vector<int64_t> lead = {12'345, -7, 0};
  for (int64_t v : lead) one_by_one.record(v);
  batched.record_all(lead.data(), lead.size());  // a first batch sets min and max
  for (int round = 0; round < 50; ++round) {
    std::vector<int64_t> batch(static_cast<size_t>(round % 7 == 0 ? 0 : 63));
    for (auto& v : batch) v = round % 3 == 0 ? small(rng) : gaps(rng);
    if (round == 20) batch.push_back(std::numeric_limits<int64_t>::max());
    for (int64_t v : batch) one_by_one.record(v);
    batched.record_all(batch.data(), batch.size());
    one_by_one.record(round);  // single records between batches
    batched.record(round);
  }
  CHECK(batched.count() == one_by_one.count());
  CHECK(batched.sum() == one_by_one.sum());
  CHECK(batched.min() == one_by_one.min());
  CHECK(batched.max() == one_by_one.max());
  CHECK(batched.mean() == doctest::Approx(one_by_one.mean()).epsilon(1e-12));
  CHECK(batched.stddev() == doctest::Approx(one_by_one.stddev()).epsilon(1e-9));
  for (double p : {1.0, 25.0, 50.0, 90.0, 99.0, 99.9}) {
    CHECK(batched.percentile(p) == one_by_one.percentile(p));
  }
  std::vector<std::tuple<int64_t, int64_t, int64_t>> a;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> b;
  one_by_one.for_each_bucket([&](int64_t lo, int64_t hi, int64_t n) { a.emplace_back(lo, hi, n); });
  batched.for_each_bucket([&](int64_t lo, int64_t hi, int64_t n) { b.emplace_back(lo, hi, n); });
  CHECK(a == b);
}

TEST_CASE("sample percentile: the exact nearest-rank value of a sample of doubles") {
  using convoy::sample_percentile;
  CHECK(std::isnan(sample_percentile({}, 50)));
  const std::vector<double> v = {0.5, 0.1, 0.4, 0.2, 0.3};
  CHECK(sample_percentile(v, 0) == 0.1);
  CHECK(sample_percentile(v, 20) == 0.1);
  CHECK(sample_percentile(v, 50) == 0.3);
  CHECK(sample_percentile(v, 99) == 0.5);
  CHECK(sample_percentile(v, 100) == 0.5);
  CHECK(sample_percentile({7.25}, 50) == 7.25);
}
