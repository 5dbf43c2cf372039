// A log-linear histogram of int64 values (HdrHistogram-style).
//
// Values 0..1023 (and -1023..-1) each have their own bucket; above that every power-of-two
// range [2^k, 2^(k+1)) is split into 512 equal buckets. A percentile reports the midpoint of
// its bucket, so it is within 1/1024 (0.098%) of the true value, over the whole int64 range
// (for nanoseconds: 1 us to 1 hour and far beyond). Memory is one counter per bucket between the
// smallest and the largest value seen (at most 28,160 counters per sign, 220 KiB), never
// growing with the number of values recorded: one value costs one counter, a latency spread
// over 10 ms..1 s about 3,400 (a counter array sized for every bucket would make a stage's dozen
// histograms 0.7 MB for a single request).
//
// count, sum, min and max are exact. std is the *population* standard deviation, kept with
// Welford's update. Percentiles use the nearest-rank definition: p(x) is
// the ceil(x/100 * count)-th smallest value, so p100 = max and the lowest rank gives min.
//
// The family: Histogram (dense counters between the smallest and largest bucket seen: cheap to
// record into, for the run's metrics) and SparseHistogram (common/sparse_histogram.hpp: only
// the buckets in use, for thousands of small ones such as time slices) share these buckets,
// their midpoints, the nearest rank and HistogramMoments, so their statistics are the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace convoy {

__extension__ typedef __int128 Int128;

// count, sum, min and max (exact), and the mean and sum of squared deviations of int64 values:
// Welford's update for one value, Chan et al.'s for a batch or a merge.
class HistogramMoments {
 public:
  // `count` occurrences of `value` (count > 0).
  void add(int64_t value, int64_t count = 1);
  // values[0..n), n > 0: the same count, sum, min and max as n add() calls, the same mean and
  // std to rounding, one division for the batch.
  void add_all(const int64_t* values, size_t n);
  void merge(const HistogramMoments& other);

  int64_t count() const { return count_; }
  long double sum() const { return static_cast<long double>(sum_); }
  int64_t min() const { return count_ ? min_ : 0; }
  int64_t max() const { return count_ ? max_ : 0; }
  double mean() const;    // sum / count; 0 when empty
  double stddev() const;  // population (divides by count); 0 when empty

 private:
  int64_t count_ = 0;
  int64_t min_ = 0;  // valid when count_ > 0
  int64_t max_ = 0;
  Int128 sum_ = 0;        // exact
  long double mean_ = 0;  // running mean and sum of squared deviations
  long double m2_ = 0;
};

class Histogram {
 public:
  // Sub-bucket bits: 2^10 exact values, then 2^9 buckets per power of two.
  static constexpr int kLayout = 10;
  static constexpr int64_t kExactBelow = int64_t{1} << kLayout;        // 1024
  static constexpr int64_t kSubBuckets = int64_t{1} << (kLayout - 1);  // 512
  // One past the largest bucket index (|value| up to 2^63 - 1).
  static constexpr int32_t kMaxBuckets =
      static_cast<int32_t>(kExactBelow + (63 - kLayout) * kSubBuckets);

  // Adds `count` occurrences of `value`; count <= 0 is ignored.
  void record(int64_t value, int64_t count = 1);
  // Adds each of values[0..n): the same buckets, count, sum, min and max as n record() calls,
  // and the same mean and std to rounding. The mean and variance of the batch are merged in
  // once (Chan et al.), so a record's 63 chunk gaps cost one division, not 63.
  void record_all(const int64_t* values, size_t n);
  void clear();

  int64_t count() const { return moments_.count(); }
  bool empty() const { return moments_.count() == 0; }
  // Exact sum of all values (long double holds integers up to 2^64 exactly).
  long double sum() const { return moments_.sum(); }
  int64_t min() const { return moments_.min(); }
  int64_t max() const { return moments_.max(); }
  double mean() const { return moments_.mean(); }
  // Population standard deviation (divides by count, not count - 1).
  double stddev() const { return moments_.stddev(); }
  // Nearest-rank percentile for p in (0, 100]; p <= 0 gives min, p > 100 gives max.
  // Within 0.1% of the exact value (exact for |values| < 1024). 0 when empty.
  int64_t percentile(double p) const;

  // Visits every non-empty bucket in ascending value order: f(lowest, highest, count), the
  // bucket's inclusive value range.
  template <class F>
  void for_each_bucket(F&& f) const;

  // Bytes held, for memory accounting.
  size_t memory_bytes() const;

  // The nearest rank (1-based) of percentile p among count values: ceil(p/100 * count), in
  // [1, count]; tolerant of p's binary rounding (99.9 of 1000 is rank 999).
  static int64_t nearest_rank(double p, int64_t count);

  // Bucket math, public for tests.
  // magnitude in [0, 2^63 - 1]; INT64_MIN is bucketed as INT64_MIN + 1 (its min stays exact).
  static int32_t bucket_index(int64_t magnitude);
  static int64_t bucket_lowest(int32_t index);
  static int64_t bucket_highest(int32_t index);
  // The midpoint of bucket `index` of values of this sign: what a percentile in it reports
  // (clamped to the histogram's min and max).
  static int64_t bucket_midpoint(int32_t index, bool negative);
  // The bucket index of |value| (INT64_MIN as INT64_MIN + 1).
  static int32_t bucket_of(int64_t value);

 private:
  // Counters for the bucket indexes [first, first + counts.size()): grows either way to the
  // buckets seen (toward lower indexes by doubling, so a descending series stays linear).
  struct Counts {
    int32_t first = 0;
    std::vector<int64_t> counts;
    void add(int32_t index, int64_t count);
    size_t end() const { return static_cast<size_t>(first) + counts.size(); }  // one past last
    int64_t at(size_t index) const { return counts[index - static_cast<size_t>(first)]; }
  };

  Counts positive_;  // values >= 0, by bucket index
  Counts negative_;  // values < 0, by the bucket index of their magnitude
  HistogramMoments moments_;
};

// The family's percentile of a sample kept whole (a few hundred doubles): exact, the value of
// Histogram::nearest_rank's rank among the sorted values (p in [0, 100]). For doubles of any
// scale (a gauge's fraction, a queue length), where Histogram's int64 buckets would need a scale
// per series and a sample this small is cheaper to sort. NaN when empty.
double sample_percentile(std::vector<double> values, double p);

template <class F>
void Histogram::for_each_bucket(F&& f) const {
  for (size_t i = negative_.end(); i-- > static_cast<size_t>(negative_.first);) {
    const int64_t n = negative_.at(i);
    if (n == 0) continue;
    const auto index = static_cast<int32_t>(i);
    f(-bucket_highest(index), -bucket_lowest(index), n);
  }
  for (size_t i = static_cast<size_t>(positive_.first); i < positive_.end(); ++i) {
    const int64_t n = positive_.at(i);
    if (n == 0) continue;
    const auto index = static_cast<int32_t>(i);
    f(bucket_lowest(index), bucket_highest(index), n);
  }
}

}  // namespace convoy
