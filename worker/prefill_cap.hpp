// load.prefill_concurrency on one worker: a Transport in front of the real one that lets at most
// `cap` requests be between their send and their first token (or their end, for a reply that
// never streams one) at once. A request over the cap waits here, in order, and is sent when a
// prefill slot frees; its record's sent_ns is then, so the wait shows as schedule lag against
// the turn's intended time. Slots free on the loop's next turn after a first token (the token
// arrives inside the transfer's read, where no transfer may start).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "worker/event_loop.hpp"
#include "worker/transport.hpp"

namespace convoy::worker {

class PrefillCap final : public Transport {
 public:
  // `cap` >= 1: this worker's share of load.prefill_concurrency.
  PrefillCap(EventLoop& loop, std::unique_ptr<Transport> inner, int64_t cap);
  ~PrefillCap() override;
  PrefillCap(const PrefillCap&) = delete;
  PrefillCap& operator=(const PrefillCap&) = delete;

  RequestId start(HttpRequest request, DoneCallback done) override;
  void cancel(RequestId id) override;
  void cancel_all() override;
  size_t in_flight() const override;

  size_t waiting() const { return waiting_.size(); }     // held back by the cap
  size_t in_prefill() const { return holding_.size(); }  // sent, no first token yet

 private:
  struct Held {
    RequestId id = 0;
    HttpRequest request;
    DoneCallback done;
  };
  void launch(Held held);
  void prefill_ended(RequestId id);  // a slot frees (on the loop's next turn)
  void pump();

  EventLoop& loop_;
  std::unique_ptr<Transport> inner_;
  size_t cap_;
  RequestId next_id_ = 1;
  std::deque<Held> waiting_;                          // in the order they were started
  std::deque<Held> cancelled_;                        // cancelled while waiting: done pending
  std::unordered_map<RequestId, RequestId> started_;  // our id -> the inner transport's
  std::unordered_set<RequestId> holding_;             // started, in prefill
  EventLoop::TimerId pump_timer_ = 0;                 // 0: none armed
};

}  // namespace convoy::worker
