// A series over time (or over a count of samples) in bounded memory: at most `capacity` points,
// each `width` wide (nanoseconds of time, or samples). When a point past the capacity is needed,
// the width doubles and neighbouring points merge in pairs: point i of the new width holds old
// points 2i and 2i+1, so a series of any length keeps its whole span, at a resolution that halves
// each time the run doubles. Memory is the capacity's points, never the run's length.
//
// The caller gives the merge: how two neighbouring points become one (`into` is the earlier,
// `from` the later). MergeSum adds counters, MergeMax keeps the larger, MergeMean averages,
// MergeKeepFirst keeps the earlier (a thinned sample), MergeMember calls a per-point struct's
// own merge(). A lone last point (an odd count) stays as it is.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace convoy {

struct MergeSum {
  template <class T>
  void operator()(T& into, const T& from) const {
    into += from;
  }
};

struct MergeMax {
  template <class T>
  void operator()(T& into, const T& from) const {
    if (into < from) into = from;
  }
};

// The mean of the two points (each already a mean of equally many values).
struct MergeMean {
  template <class T>
  void operator()(T& into, const T& from) const {
    into = (into + from) / 2;
  }
};

struct MergeKeepFirst {
  template <class T>
  void operator()(T& /*into*/, const T& /*from*/) const {}
};

struct MergeMember {
  template <class T>
  void operator()(T& into, const T& from) const {
    into.merge(from);
  }
};

template <class T, class Merge = MergeSum>
class BoundedSeries {
 public:
  // capacity >= 2 points; width >= 1 (a point's span, in the caller's unit).
  BoundedSeries(size_t capacity, int64_t width, Merge merge = Merge{})
      : capacity_(capacity < 2 ? 2 : capacity), width_(width < 1 ? 1 : width), merge_(merge) {}

  // The index of the point holding `offset` (from the series' start, in the width's unit;
  // negative counts as 0). Doubles the width until it fits within the capacity, then creates
  // that point (and every one before it) as T{} when new.
  size_t index_of(int64_t offset) {
    if (offset < 0) offset = 0;
    auto index = static_cast<size_t>(offset / width_);
    while (index >= capacity_) {
      coarsen();
      index = static_cast<size_t>(offset / width_);
    }
    if (points_.size() <= index) {
      // Grow as a vector does, but never past the capacity: the memory bound is exact.
      if (points_.capacity() <= index) {
        points_.reserve(std::min(capacity_, std::max(index + 1, 2 * points_.capacity())));
      }
      points_.resize(index + 1);
    }
    return index;
  }
  // The point holding `offset` (index_of's).
  T& at(int64_t offset) { return points_[index_of(offset)]; }

  // Whether the point at `offset` fits at today's width (index_of would not coarsen).
  bool fits(int64_t offset) const {
    return static_cast<size_t>(offset < 0 ? 0 : offset / width_) < capacity_;
  }

  // For a series filled point by point (a point per `width` samples): appends one.
  void push_back(T point) { points_.push_back(std::move(point)); }
  bool full() const { return points_.size() >= capacity_; }

  // Doubles the width: neighbouring points merge in pairs.
  void coarsen() {
    const size_t n = points_.size();
    for (size_t i = 0; i < n / 2; ++i) {
      T merged = std::move(points_[2 * i]);
      merge_(merged, points_[2 * i + 1]);
      points_[i] = std::move(merged);
    }
    if (n % 2 == 1) points_[n / 2] = std::move(points_[n - 1]);
    points_.resize((n + 1) / 2);
    width_ *= 2;
  }

  size_t size() const { return points_.size(); }
  bool empty() const { return points_.empty(); }
  size_t capacity() const { return capacity_; }
  int64_t width() const { return width_; }
  // Where point i starts (i * width), in the width's unit.
  int64_t start_of(size_t i) const { return static_cast<int64_t>(i) * width_; }
  T& operator[](size_t i) { return points_[i]; }
  const T& operator[](size_t i) const { return points_[i]; }
  std::span<T> points() { return points_; }
  std::span<const T> points() const { return points_; }
  // Bytes of the points' storage, at most capacity() points (a T's own heap storage is the
  // caller's to count).
  size_t memory_bytes() const { return points_.capacity() * sizeof(T); }

 private:
  size_t capacity_;  // most points held, >= 2
  int64_t width_;    // a point's span, doubling on each coarsen(); >= 1
  Merge merge_;
  std::vector<T> points_;  // point i covers [i * width_, (i + 1) * width_)
};

}  // namespace convoy
