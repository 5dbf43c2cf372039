// What the worker sends back on its results socket, batched: records, conversation ends,
// conversations that could not run, window conversations given back, and last the Bye. A batch
// leaves when it is full, when something in it frees a slot at the controller (at the end of
// this loop iteration), or at most flush_delay after its first record. Batches the PUSH socket
// refuses (high-water mark) are offered again, in order, until they are taken: nothing is
// dropped and nothing overtakes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proto/messages.hpp"
#include "worker/event_loop.hpp"

namespace convoy::worker {

// How soon a batch the results socket refused is offered again.
inline constexpr int64_t kResultsRetryNs = 10'000'000;

class ResultBatcher {
 public:
  // Offers one encoded message to the results socket without blocking; false when it would
  // block (the message is kept and offered again later).
  using Send = std::function<bool(const std::string& bytes)>;

  struct Settings {
    std::string worker_id;
    int64_t flush_delay_ns = 10'000'000;  // a record waits at most this long (> 0)
    size_t max_batch_records = 512;       // a batch this full leaves at once (>= 1)
  };

  // `after_retry` runs after each retry of refused messages once the Bye is queued (the worker
  // ends when the last of them is taken). `loop` must outlive the batcher.
  ResultBatcher(EventLoop& loop, Send send, Settings settings, std::function<void()> after_retry);
  ~ResultBatcher();
  ResultBatcher(const ResultBatcher&) = delete;
  ResultBatcher& operator=(const ResultBatcher&) = delete;

  void set_token(const std::string& token) { batch_.token = token; }

  void add_record(proto::Record&& record);
  // An end frees a slot at the controller: `send_now` sends it with whatever else this loop
  // iteration produced; otherwise it waits for the batch's flush delay.
  void add_end(const proto::ConversationEnd& end, bool send_now);
  void add_returned(uint64_t conversation_index);  // sent this loop iteration
  // These two wait for send_this_iteration() or the next flush.
  void add_failed(proto::FailedConversation&& failed);
  void add_undecodable(proto::UndecodableAssign&& undecodable);

  // The batch leaves at the end of this loop iteration, after every ready file descriptor.
  void send_this_iteration() { arm_flush(true); }
  // Sends the batch now (nothing when it is empty or the Bye is queued).
  void flush();
  // Flushes the batch, then queues `bye` (null: none) as the last message: nothing follows it.
  void finish(const proto::Bye* bye);

  bool finished() const { return finished_; }
  // Messages the results socket has not taken yet.
  size_t unsent() const { return unsent_.size(); }

 private:
  void arm_flush(bool this_iteration);
  void send_unsent();

  EventLoop& loop_;
  Send send_;
  const Settings settings_;
  std::function<void()> after_retry_;
  proto::Results batch_;                // being filled; worker_id and token set once
  EventLoop::TimerId flush_timer_ = 0;  // 0: no flush armed
  bool flush_soon_ = false;             // flush_timer_ fires this loop iteration
  EventLoop::TimerId retry_timer_ = 0;  // 0: nothing refused waits
  std::vector<std::string> unsent_;     // encoded messages the socket refused, in order
  bool finished_ = false;               // the Bye is queued (or there was none to send)
};

}  // namespace convoy::worker
