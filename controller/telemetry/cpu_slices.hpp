// Cuts a long stretch of CPU work into slices with a sched_yield() between them.
//
// The scraper thread handles a scrape in one go: a 5,000-series reply is parsed, folded into the
// store and written as one server_metrics.jsonl line, about 3 ms of CPU, and ten endpoints fall
// due together. On a host whose cores are all busy (the 2-core machine of bench (j): the worker,
// the mock, the controller), a worker whose timer falls due while the scraper holds its core
// waits until the scheduler preempts the scraper; nice 10 does not make that wait short (the
// fair scheduler still lets the running thread finish its slice). A yield every ~100 us of
// work lets such a thread run at once; when nothing waits, sched_yield() returns at once and
// costs one system call per slice.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <functional>

namespace convoy::telemetry {

class CpuSlices {
 public:
  using Clock = std::function<int64_t()>;
  using Yield = std::function<void()>;

  static constexpr int64_t kDefaultSliceNs = 100'000;
  // The clock is read once every this many units of work (a sample is well under 1 us).
  static constexpr unsigned kCheckEvery = 64;

  explicit CpuSlices(
      int64_t slice_ns = kDefaultSliceNs, Clock clock = steady_ns,
      Yield yield = [] { ::sched_yield(); })
      : slice_ns_(slice_ns), clock_(std::move(clock)), yield_(std::move(yield)) {}

  // A burst of work starts now (the thread just woke): its first slice starts here.
  void start() {
    calls_ = 0;
    slice_start_ns_ = clock_();
  }

  // One unit of work done: yields when the slice is used up.
  void point() {
    if (++calls_ < kCheckEvery) return;
    calls_ = 0;
    if (clock_() - slice_start_ns_ < slice_ns_) return;
    yield_();
    ++yields_;
    slice_start_ns_ = clock_();
  }

  int64_t yields() const { return yields_; }

  static int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  int64_t slice_ns_;
  Clock clock_;
  Yield yield_;
  unsigned calls_ = 0;
  int64_t slice_start_ns_ = 0;
  int64_t yields_ = 0;
};

}  // namespace convoy::telemetry
