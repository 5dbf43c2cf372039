// The Histogram family's sparse member: Histogram's buckets, statistics and nearest-rank
// percentiles (the same numbers for the same values), storing only the buckets in use, in a
// sorted vector. For many small histograms (a run's time slices: thousands of slices, a dozen
// metrics each, a few values apiece), where Histogram's dense counters between the smallest and
// largest bucket seen would cost a counter per 0.1% step of the spread. Recording costs a binary
// search and, for a new bucket, an insert: use Histogram where values are many.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/histogram.hpp"

namespace convoy {

class SparseHistogram {
 public:
  void record(int64_t value);
  // Adds every value of `other` (exact: the same buckets and moments as recording them here).
  void merge(const SparseHistogram& other);

  int64_t count() const { return moments_.count(); }
  bool empty() const { return moments_.count() == 0; }
  long double sum() const { return moments_.sum(); }
  int64_t min() const { return moments_.min(); }
  int64_t max() const { return moments_.max(); }
  double mean() const { return moments_.mean(); }
  double stddev() const { return moments_.stddev(); }
  // Histogram::percentile's value for the same values.
  int64_t percentile(double p) const;
  size_t memory_bytes() const;

 private:
  // (key, count) sorted by key: a value v >= 0 has key bucket_of(v), v < 0 has
  // -(bucket_of(v) + 1), so that keys ascend with values.
  std::vector<std::pair<int32_t, int64_t>> buckets_;
  HistogramMoments moments_;
};

}  // namespace convoy
