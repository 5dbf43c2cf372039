// The assigner: which conversation goes where and when. It owns the dataset, the sharder (a
// conversation's correlation id picks its worker), the scheduler of the current phase, the
// book of conversations in flight with their batches, load.requests' budget and each worker's
// refill window (concurrency refill: a worker holds the next few conversations sharded to it
// and starts one in the slot its own ended conversation freed). The run loop tells it the
// phase, the ends, the losses; as a RecordOutput it sees which conversations started.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/run/in_flight.hpp"
#include "controller/run/record_pipeline.hpp"
#include "controller/run/schedule.hpp"
#include "controller/run/sharding.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

class ProfileDriver;
class WorkerPlane;
struct RunFacts;

// Window conversations per worker for `phase` (warmup or measure) of `load` on `workers`
// workers; 0 where the controller must start every conversation itself.
size_t refill_window(const LoadConfig& load, size_t workers, proto::Phase phase);
// The warmup's load: load.warmup's concurrency or rate (mode rate), else the measure's
// concurrency (mode concurrency).
LoadConfig warmup_level(const LoadConfig& load);
// load.prefill_concurrency's share of the `nth` worker welcomed (0-based) of `workers`: `total`
// split as evenly as whole requests allow, the larger shares first; a worker that replaces a
// lost one takes the next share in turn. Every share is at least 1 (the config keeps total >=
// workers).
int64_t prefill_share(int64_t total, int workers, uint64_t nth);

class Assigner : public RecordOutput {
 public:
  // Called when the dataset cannot be read during the run (a file rewritten in place): the run
  // keeps what was measured, starts nothing more and ends as incomplete.
  using DatasetError = std::function<void(const std::string& what)>;

  Assigner(const Config& config, std::unique_ptr<Dataset> dataset, WorkerPlane& plane,
           RunFacts& facts, DatasetError on_dataset_error);

  Sharder& sharder() { return sharder_; }
  void start_warmup(int64_t now);
  // The measured conversations' scheduler; returns how many the measure will start (nullopt:
  // until its time, its request count or its profile ends it).
  std::optional<uint64_t> start_measure(int64_t now);
  // Sends what is due by `now` in `phase` (plus the lookahead), the windows' starts and
  // top-ups; under load.requests or a stage that ends on `requests`, one at a time.
  void dispatch(int64_t now, proto::Phase phase, ProfileDriver& profile);
  void stop_starting();

  // When the next scheduled conversation is due to go out (its intended time less the
  // lookahead); nullopt: none is scheduled.
  std::optional<int64_t> next_due_ns() const;
  Scheduler* scheduler() { return scheduler_ ? &*scheduler_ : nullptr; }
  bool idle() const { return in_flight_.empty(); }
  size_t in_flight() const { return in_flight_.size(); }
  size_t running() const { return in_flight_.running(); }
  const Dataset& dataset() const { return *dataset_; }  // AIPerf's inputs.json reads it again
  bool exhausted() const { return !scheduler_ || scheduler_->exhausted(); }
  bool budget_spent() const { return budget_.used(); }
  bool budget_limited() const { return budget_.limited(); }
  std::vector<uint64_t> unfinished() const { return in_flight_.indexes(); }

  // A conversation ended on `worker`; false when it is not the sender's (re-homed or lost).
  bool on_end(const std::string& worker, const proto::ConversationEnd& end, int64_t now);
  // A conversation its worker could not run; false when it is not the sender's.
  bool on_failed(const std::string& worker, uint64_t index, int64_t now);
  std::vector<uint64_t> undecodable(const std::string& worker, const proto::UndecodableAssign& u);
  // Window conversations a worker gave back unstarted; `leaving`: it starts nothing more.
  void on_returned(const std::string& worker, const std::vector<uint64_t>& returned, bool leaving,
                   int64_t now);
  // A lost worker's conversations: those never started are re-homed while `can_rehome`, the
  // rest are lost. Returns the lost ones (in a slot, then in its window) and how many moved.
  struct Lost {
    std::vector<uint64_t> in_slot;
    std::vector<uint64_t> in_window;
    size_t rehomed = 0;
  };
  Lost on_worker_lost(const std::string& worker, int64_t now, bool can_rehome);

  void on_record(const RecordEvent& e) override { in_flight_.on_record(e.record); }

 private:
  // An Assign batch is split before it would outgrow half the wire's message limit.
  static constexpr uint64_t kAssignBatchBytes = proto::kMaxMessageBytes / 2;

  // Queues conversation `seq` for its worker; false when the dataset could not be read.
  bool assign(uint64_t seq, int64_t intended_ns, proto::Phase phase, bool window = false);
  void send_assign(const std::string& worker, proto::Assign& msg);
  void start_windows(int64_t now);
  void top_up_windows(proto::Phase phase);
  void slot_freed(uint64_t index, int64_t now);

  const Config& config_;
  std::unique_ptr<Dataset> dataset_;  // generated or read back per conversation, never held
  WorkerPlane& plane_;
  RunFacts& facts_;
  DatasetError on_dataset_error_;
  bool dataset_failed_ = false;
  Sharder sharder_;
  std::optional<Scheduler> scheduler_;
  uint64_t seq_base_ = 0;  // first seq of the current scheduler
  InFlight in_flight_{kAssignBatchBytes};
  InFlight::Send send_ = [this](const std::string& w, proto::Assign& m) { send_assign(w, m); };
  size_t window_per_worker_ = 0;    // 0: no windows (load.warmup_s, rate, trace, stages)
  RequestBudget budget_;            // unlimited until the measure phase
  int64_t last_planned_turns_ = 0;  // of the conversation assign() last queued
};

}  // namespace convoy::controller
