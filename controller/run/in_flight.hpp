// The conversations a run has assigned and not yet seen end: which worker holds each, the
// Assign batch it went out in, and (load.requests) the turns it was granted. The Run asks it
// what a lost worker held and which conversations an undecodable batch named. No I/O: batches
// leave through the Send callback the Run passes in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/run/schedule.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

class InFlight {
 public:
  struct Entry {
    std::string worker;
    int64_t intended_ns = 0;
    proto::Phase phase = proto::Phase::kMeasure;
    bool started = false;  // a record arrived for it
    uint64_t batch = 0;    // the Assign batch it went out in (numbered per worker)
    uint32_t batch_pos = 0;
  };
  // Sends one batch; sets msg.batch to the worker's next batch number first.
  using Send = std::function<void(const std::string& worker, proto::Assign& msg)>;

  // An Assign batch is split before it would outgrow `batch_bytes`.
  explicit InFlight(uint64_t batch_bytes) : batch_bytes_(batch_bytes) {}

  // load.requests, measured conversations only: a new one commits its planned turns, a
  // re-homed one keeps the grant it had; either is cut to its grant (the last kept turn is
  // then its final one).
  void apply_grant(proto::Conversation& c, RequestBudget& budget);
  // Queues `c` for `worker`'s next batch (sending the pending one first when `c` would not fit).
  void queue(const std::string& worker, proto::Conversation c, int64_t intended_ns,
             const Send& send);
  void flush(const Send& send);  // every pending batch

  // A record of a conversation: it has started, and one more of its granted turns was sent.
  void on_record(const proto::Record& r);
  // Ends a conversation if `worker` holds it (a re-homed or lost one is not the sender's):
  // its unsent granted turns go back to the budget. Returns whether it ended.
  bool end(const std::string& worker, uint64_t index, RequestBudget& budget);
  // The conversations of `worker`'s batch u.batch that u names (by position, or from
  // u.unreadable_from on).
  std::vector<uint64_t> undecodable(const std::string& worker,
                                    const proto::UndecodableAssign& u) const;
  // Takes every conversation `worker` holds out of the book (a lost worker). Those `rehome`
  // accepts come back first, each with its entry, for assignment elsewhere; the rest are lost.
  struct Taken {
    std::vector<std::pair<uint64_t, Entry>> rehome;
    std::vector<uint64_t> lost;
  };
  Taken take_worker(const std::string& worker, const std::function<bool(const Entry&)>& rehome);

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  std::vector<uint64_t> indexes() const;

 private:
  void send_batch(const std::string& worker, proto::Assign& msg, const Send& send);

  struct Grant {
    int64_t granted = 0;
    int64_t sent = 0;
  };
  uint64_t batch_bytes_;
  std::unordered_map<uint64_t, Entry> entries_;  // by conversation index (= seq)
  // Kept apart from entries_ so a re-homed conversation keeps its grant; a lost one keeps it
  // too (it may have sent requests whose records never came back).
  std::unordered_map<uint64_t, Grant> grants_;
  std::map<std::string, proto::Assign> pending_;
  std::map<std::string, uint64_t> pending_bytes_;  // wire_bytes_bound of each pending batch
};

}  // namespace convoy::controller
