#include "common/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace convoy {

namespace {

constexpr int64_t kMaxMagnitude = std::numeric_limits<int64_t>::max();

int64_t magnitude_of(int64_t value) {
  if (value >= 0) return value;
  if (value == std::numeric_limits<int64_t>::min()) return kMaxMagnitude;
  return -value;
}

}  // namespace

int32_t Histogram::bucket_index(int64_t magnitude) {
  if (magnitude < kExactBelow) return static_cast<int32_t>(std::max<int64_t>(magnitude, 0));
  const int msb = 63 - std::countl_zero(static_cast<uint64_t>(magnitude));
  const int shift = msb - (kLayout - 1);  // magnitude >> shift lies in [512, 1024)
  const int64_t sub = magnitude >> shift;
  return static_cast<int32_t>(kExactBelow + (shift - 1) * kSubBuckets + (sub - kSubBuckets));
}

int64_t Histogram::bucket_lowest(int32_t index) {
  if (index < kExactBelow) return index;
  const int64_t j = index - kExactBelow;
  const int64_t shift = j / kSubBuckets + 1;
  const int64_t sub = j % kSubBuckets + kSubBuckets;
  return sub << shift;
}

int64_t Histogram::bucket_highest(int32_t index) {
  if (index < kExactBelow) return index;
  const int64_t shift = (index - kExactBelow) / kSubBuckets + 1;
  // lowest + 2^shift - 1, written so the top bucket ends exactly at 2^63 - 1.
  return bucket_lowest(index) + ((int64_t{1} << shift) - 1);
}

int64_t Histogram::nearest_rank(double p, int64_t count) {
  if (count <= 0) return 0;
  const long double x = static_cast<long double>(p) * static_cast<long double>(count) / 100.0L;
  const long double rank = std::ceil(x - x * 1e-12L);
  if (rank <= 1) return 1;
  if (rank >= static_cast<long double>(count)) return count;
  return static_cast<int64_t>(rank);
}

void Histogram::Counts::add(int32_t index, int64_t count) {
  if (counts.empty()) {
    first = index;
    counts.assign(1, count);
    return;
  }
  if (index < first) {
    // Room below for as many buckets again as are held (at least down to `index`).
    const auto held = static_cast<int32_t>(std::min<size_t>(counts.size(), kMaxBuckets));
    const int32_t new_first = std::max(0, std::min(index, first - held));
    counts.insert(counts.begin(), static_cast<size_t>(first - new_first), 0);
    first = new_first;
  }
  const auto i = static_cast<size_t>(index - first);
  if (counts.size() <= i) counts.resize(i + 1, 0);
  counts[i] += count;
}

void HistogramMoments::add(int64_t value, int64_t count) {
  if (count_ == 0) {
    min_ = value;
    max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  const int64_t n = count_ + count;
  sum_ += static_cast<Int128>(value) * count;
  // Welford, for `count` equal values at once.
  const long double v = static_cast<long double>(value);
  const long double delta = v - mean_;
  mean_ += delta * static_cast<long double>(count) / static_cast<long double>(n);
  m2_ += delta * (v - mean_) * static_cast<long double>(count);
  count_ = n;
}

void HistogramMoments::add_all(const int64_t* values, size_t n) {
  if (count_ == 0) {
    min_ = values[0];
    max_ = values[0];
  }
  Int128 batch_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    min_ = std::min(min_, values[i]);
    max_ = std::max(max_, values[i]);
    batch_sum += values[i];
  }
  const auto k = static_cast<long double>(n);
  const long double batch_mean = static_cast<long double>(batch_sum) / k;
  long double batch_m2 = 0;
  for (size_t i = 0; i < n; ++i) {
    const long double d = static_cast<long double>(values[i]) - batch_mean;
    batch_m2 += d * d;
  }
  const auto before = static_cast<long double>(count_);
  const long double total = before + k;
  const long double delta = batch_mean - mean_;
  mean_ += delta * k / total;
  m2_ += batch_m2 + delta * delta * before * k / total;
  sum_ += batch_sum;
  count_ += static_cast<int64_t>(n);
}

void HistogramMoments::merge(const HistogramMoments& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  // Chan et al.: the combined mean and sum of squared deviations of two parts.
  const auto na = static_cast<long double>(count_);
  const auto nb = static_cast<long double>(other.count_);
  const long double delta = other.mean_ - mean_;
  mean_ += delta * nb / (na + nb);
  m2_ += other.m2_ + delta * delta * na * nb / (na + nb);
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
}

double HistogramMoments::mean() const {
  if (count_ == 0) return 0;
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

double HistogramMoments::stddev() const {
  if (count_ == 0) return 0;
  const long double variance = std::max(0.0L, m2_ / static_cast<long double>(count_));
  return static_cast<double>(std::sqrt(variance));
}

int32_t Histogram::bucket_of(int64_t value) { return bucket_index(magnitude_of(value)); }

int64_t Histogram::bucket_midpoint(int32_t index, bool negative) {
  const int64_t low = bucket_lowest(index);
  const int64_t mid = low + (bucket_highest(index) - low) / 2;
  return negative ? -mid : mid;
}

void Histogram::record(int64_t value, int64_t count) {
  if (count <= 0) return;
  (value < 0 ? negative_ : positive_).add(bucket_of(value), count);
  moments_.add(value, count);
}

void Histogram::record_all(const int64_t* values, size_t n) {
  if (n == 0) return;
  for (size_t i = 0; i < n; ++i) {
    const int64_t value = values[i];
    (value < 0 ? negative_ : positive_).add(bucket_of(value), 1);
  }
  moments_.add_all(values, n);
}

void Histogram::clear() { *this = Histogram{}; }

int64_t Histogram::percentile(double p) const {
  const int64_t count = moments_.count();
  if (count == 0) return 0;
  if (!(p > 0)) return min();  // also NaN
  const int64_t rank = nearest_rank(p, count);
  if (rank <= 1) return min();
  if (rank >= count) return max();
  int64_t seen = 0;
  for (size_t i = negative_.end(); i-- > static_cast<size_t>(negative_.first);) {
    seen += negative_.at(i);
    if (seen >= rank)
      return std::clamp(bucket_midpoint(static_cast<int32_t>(i), true), min(), max());
  }
  for (size_t i = static_cast<size_t>(positive_.first); i < positive_.end(); ++i) {
    seen += positive_.at(i);
    if (seen >= rank)
      return std::clamp(bucket_midpoint(static_cast<int32_t>(i), false), min(), max());
  }
  return max();
}

size_t Histogram::memory_bytes() const {
  return sizeof(Histogram) +
         (positive_.counts.capacity() + negative_.counts.capacity()) * sizeof(int64_t);
}

double sample_percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const int64_t rank = Histogram::nearest_rank(p, static_cast<int64_t>(values.size()));
  return values[static_cast<size_t>(rank - 1)];
}

}  // namespace convoy
