// When conversations start: pure functions of the load config, the seed and `now`. Intended
// start times are fixed in advance (rate, trace) so a late start shows up as schedule lag
// instead of silently stretching the schedule (wrk2's coordinated-omission lesson).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::controller {

// Inter-arrival gaps for mode rate: constant 1/rate, exponential (poisson) or gamma with shape
// `burstiness` and the same mean. Sequence i depends only on (seed, i), via one stream.
class ArrivalProcess {
 public:
  ArrivalProcess(const LoadConfig& load, uint64_t seed);
  int64_t next_gap_ns();  // the gap before the next arrival (the first arrival is at gap 0)

 private:
  Arrival arrival_;
  double rate_per_s_;
  double shape_;
  std::mt19937_64 rng_;
  bool first_ = true;
};

struct Dispatch {
  uint64_t seq = 0;         // 0, 1, 2, ...; mode trace: ordered by intended time instead
  int64_t intended_ns = 0;  // controller steady clock
};

// Decides which conversations start and when. Not thread-safe; driven by the run loop.
class Scheduler {
 public:
  // `total`: conversations to start (nullopt = until stop()). `trace_offset_ns(seq)` gives the
  // intended offset from the start for mode trace; offsets need not be sorted (a trace file's
  // rows are not): with a total, conversations go out in order of offset.
  Scheduler(const LoadConfig& load, LoadMode mode, uint64_t seed, std::optional<uint64_t> total,
            int64_t start_ns, std::function<int64_t(uint64_t)> trace_offset_ns = {});

  // Conversations to hand out now: those intended by now + lookahead, within the concurrency
  // limit, at most `max` of them. In mode concurrency the intended time of a conversation is
  // when its slot freed.
  std::vector<Dispatch> due(int64_t now_ns, int64_t lookahead_ns, size_t max = SIZE_MAX);
  void on_end(int64_t now_ns);  // one dispatched conversation ended: its slot frees
  void stop() { stopped_ = true; }

  bool exhausted() const;  // stopped, or every conversation dispatched
  int64_t in_flight() const { return in_flight_; }
  uint64_t dispatched() const { return next_seq_; }
  // The next intended start not yet dispatched (rate/trace), for the loop's wake-up.
  std::optional<int64_t> next_intended_ns() const;

 private:
  int64_t intended_for_next(int64_t now_ns);
  uint64_t seq_at(uint64_t position) const {
    return position < trace_order_.size() ? trace_order_[position] : position;
  }

  LoadMode mode_;
  int64_t limit_;  // max in flight
  std::optional<uint64_t> total_;
  int64_t start_ns_;
  ArrivalProcess arrivals_;
  std::function<int64_t(uint64_t)> trace_offset_ns_;
  std::vector<uint64_t> trace_order_;  // mode trace: seqs by (offset, seq); empty = 0, 1, 2, ...
  uint64_t next_seq_ = 0;
  int64_t in_flight_ = 0;
  bool stopped_ = false;
  std::optional<int64_t> next_intended_;  // rate/trace: computed once per seq
  int64_t rate_clock_ns_;                 // the running sum of gaps
  std::vector<int64_t> freed_at_ns_;      // concurrency: when each free slot freed
};

// load.requests (AIPerf's --request-count): exactly this many measured requests are sent. A
// conversation commits its planned turns when it is assigned; the one that would overshoot is
// cut so that the committed total never exceeds the limit (its last kept turn becomes its final
// turn). A conversation that ends early (aborted, cancelled) gives back the turns it did not
// send, so further conversations can be assigned. Warmup conversations do not count.
class RequestBudget {
 public:
  RequestBudget() = default;  // unlimited
  explicit RequestBudget(std::optional<int64_t> limit) : limit_(limit) {}

  bool limited() const { return limit_.has_value(); }
  // Turns granted of `planned` (all of them when unlimited; fewer when the budget runs out).
  int64_t commit(int64_t planned);
  // A conversation granted `granted` turns ended after sending `sent`: the rest come back.
  void release(int64_t granted, int64_t sent);
  int64_t remaining() const;  // not yet committed; INT64_MAX when unlimited
  bool used() const { return limit_ && committed_ >= *limit_; }
  int64_t committed() const { return committed_; }

 private:
  std::optional<int64_t> limit_;
  int64_t committed_ = 0;
};

}  // namespace convoy::controller
