#include "common/sparse_histogram.hpp"

#include <algorithm>

namespace convoy {

namespace {

int32_t key_of(int64_t value) {
  const int32_t index = Histogram::bucket_of(value);
  return value >= 0 ? index : -(index + 1);
}

int64_t midpoint_of(int32_t key) {
  return key < 0 ? Histogram::bucket_midpoint(-key - 1, true)
                 : Histogram::bucket_midpoint(key, false);
}

}  // namespace

void SparseHistogram::record(int64_t value) {
  const int32_t key = key_of(value);
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), key,
                             [](const auto& b, int32_t k) { return b.first < k; });
  if (it != buckets_.end() && it->first == key) {
    ++it->second;
  } else {
    buckets_.insert(it, {key, 1});
  }
  moments_.add(value);
}

void SparseHistogram::merge(const SparseHistogram& other) {
  if (other.empty()) return;
  if (empty()) {
    *this = other;
    return;
  }
  std::vector<std::pair<int32_t, int64_t>> merged;
  merged.reserve(buckets_.size() + other.buckets_.size());
  auto a = buckets_.begin();
  auto b = other.buckets_.begin();
  while (a != buckets_.end() || b != other.buckets_.end()) {
    if (b == other.buckets_.end() || (a != buckets_.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == buckets_.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second + b->second);
      ++a;
      ++b;
    }
  }
  buckets_ = std::move(merged);
  moments_.merge(other.moments_);
}

int64_t SparseHistogram::percentile(double p) const {
  const int64_t count = moments_.count();
  if (count == 0) return 0;
  if (!(p > 0)) return min();  // also NaN
  const int64_t rank = Histogram::nearest_rank(p, count);
  if (rank <= 1) return min();
  if (rank >= count) return max();
  int64_t seen = 0;
  for (const auto& [key, n] : buckets_) {
    seen += n;
    if (seen >= rank) return std::clamp(midpoint_of(key), min(), max());
  }
  return max();
}

size_t SparseHistogram::memory_bytes() const {
  return sizeof(*this) + buckets_.capacity() * sizeof(buckets_[0]);
}

}  // namespace convoy
