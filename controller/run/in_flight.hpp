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
    bool window = false;  // waits in its worker's window: holds no concurrency slot yet
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
  // `window`: it waits in the worker's window (concurrency refill: it starts in a slot the worker
  // frees).
  void queue(const std::string& worker, proto::Conversation c, int64_t intended_ns,
             const Send& send, bool window = false);
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
  // accepts come back first, each with its entry, for assignment elsewhere; the rest are lost
  // (with their grants: they may have sent requests that never reported back).
  struct Taken {
    std::vector<std::pair<uint64_t, Entry>> rehome;
    std::vector<uint64_t> lost;         // held a concurrency slot
    std::vector<uint64_t> lost_window;  // waited in the worker's window: held no slot
  };
  Taken take_worker(const std::string& worker, const std::function<bool(const Entry&)>& rehome);

  // Concurrency refill. The worker started window conversation `index` in a slot
  // it freed: it now holds that slot. False when it is not a window conversation of `worker`
  // (already started by the controller's start, returned, or taken).
  bool refilled(const std::string& worker, uint64_t index);
  // The oldest window conversation (any worker) starts in a slot the controller got back: it
  // is queued as a start in its worker's next batch. False when no window holds one.
  bool start_oldest_window(int64_t intended_ns,
                           const std::function<int64_t(const std::string&)>& worker_offset_ns);
  // A window conversation its worker gave back unstarted: out of the book, its granted turns
  // back to `budget` (load.requests: it sent none). kSlot: the controller had already started
  // it in a slot (its start crossed the return), so that slot frees; kWindow: it held none;
  // kNotHeld: not `worker`'s, or already started.
  enum class Returned { kNotHeld, kWindow, kSlot };
  Returned returned(const std::string& worker, uint64_t index, RequestBudget* budget = nullptr);
  size_t windows() const { return windows_.size(); }
  bool in_window(uint64_t index) const { return windows_.count(index) != 0; }
  size_t window_of(const std::string& worker) const;
  size_t running() const { return entries_.size() - windows_.size(); }

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
  // Pending batches by (worker, window): window conversations travel in batches of their own.
  std::map<std::pair<std::string, bool>, proto::Assign> pending_;
  std::map<std::pair<std::string, bool>, uint64_t> pending_bytes_;  // wire_bytes_bound of each
  std::map<uint64_t, std::string> windows_;  // window conversations by index: their worker
};

}  // namespace convoy::controller
