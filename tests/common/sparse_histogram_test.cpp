#include "common/sparse_histogram.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <limits>

#include "common/histogram.hpp"

namespace {

using convoy::Histogram;
using convoy::SparseHistogram;

constexpr double kCheckedPercentiles[] = {0, 0.1, 1, 25, 50, 75, 99, 99.9, 100};

void check_same(const SparseHistogram& sparse, const Histogram& dense) {
  CHECK(sparse.count() == dense.count());
  CHECK(sparse.min() == dense.min());
  CHECK(sparse.max() == dense.max());
  CHECK(sparse.sum() == dense.sum());
  CHECK(sparse.mean() == dense.mean());
  CHECK(sparse.stddev() == doctest::Approx(dense.stddev()));
  for (double p : kCheckedPercentiles) {
    CAPTURE(p);
    CHECK(sparse.percentile(p) == dense.percentile(p));
  }
}

}  // namespace

TEST_CASE("sparse histogram: Histogram's numbers from only the buckets in use") {
  Histogram dense;
  SparseHistogram sparse;
  SparseHistogram even;
  SparseHistogram odd;
  uint64_t x = 99;
  for (int i = 0; i < 3000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t v = static_cast<int64_t>(x >> 30) - (int64_t{1} << 33);  // both signs
    dense.record(v);
    sparse.record(v);
    (i % 2 == 0 ? even : odd).record(v);
  }
  check_same(sparse, dense);
  SUBCASE("merging two halves gives the whole") {
    even.merge(odd);
    check_same(even, dense);
  }
  SUBCASE("merging into or from an empty one") {
    SparseHistogram empty;
    empty.merge(sparse);
    check_same(empty, dense);
    sparse.merge(SparseHistogram{});
    check_same(sparse, dense);
  }
}

TEST_CASE("sparse histogram: empty, extremes and memory") {
  SparseHistogram h;
  CHECK(h.empty());
  CHECK(h.percentile(50) == 0);
  CHECK(h.mean() == 0);
  h.record(std::numeric_limits<int64_t>::min());
  h.record(std::numeric_limits<int64_t>::max());
  CHECK(h.min() == std::numeric_limits<int64_t>::min());
  CHECK(h.max() == std::numeric_limits<int64_t>::max());
  CHECK(h.percentile(100) == std::numeric_limits<int64_t>::max());
  SparseHistogram one_value;
  const size_t before = one_value.memory_bytes();
  for (int i = 0; i < 1000; ++i) one_value.record(42'000'000);
  CHECK(one_value.memory_bytes() <= before + 64);  // one bucket, whatever the count
  CHECK(one_value.percentile(50) == 42'000'000);
}

TEST_CASE("histogram moments: a batch and a merge agree with one value at a time") {
  convoy::HistogramMoments single;
  convoy::HistogramMoments batch;
  convoy::HistogramMoments left;
  convoy::HistogramMoments right;
  const int64_t values[] = {5, -3, 1'000'000, 7, 7, 0, 123'456'789};
  for (size_t i = 0; i < std::size(values); ++i) {
    single.add(values[i]);
    (i < 3 ? left : right).add(values[i]);
  }
  batch.add(values[0]);
  batch.add_all(values + 1, std::size(values) - 1);
  left.merge(right);
  for (const auto* m : {&batch, &left}) {
    CHECK(m->count() == single.count());
    CHECK(m->sum() == single.sum());
    CHECK(m->min() == single.min());
    CHECK(m->max() == single.max());
    CHECK(m->mean() == single.mean());
    CHECK(m->stddev() == doctest::Approx(single.stddev()));
  }
}
