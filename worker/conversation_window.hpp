// The worker's side of the concurrency refill window: conversations sharded here ahead of time
// that wait for a slot. A slot this worker frees (a conversation's end) starts the next one at
// once, without a round trip to the controller; the controller's start message starts a named
// one. Once the run stops starting, the window closes and everything in it goes back unstarted.
// Pure bookkeeping: no clock, no loop, no sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "proto/messages.hpp"

namespace convoy::worker {

class ConversationWindow {
 public:
  // Puts `c` at the back of the window. False, and `c` untouched, when the window is closed:
  // the caller gives it back to the controller.
  bool add(proto::Conversation& c);

  // The conversation `index`, taken out of the window; nullopt when it is not there (already
  // started here by a refill, or given back).
  std::optional<proto::Conversation> take(uint64_t index);

  // A freed slot's next conversation: the front one, taken out; nullopt when the window is
  // closed or empty.
  std::optional<proto::Conversation> refill();

  // True when at most half of the most the window has held is left: the controller should hear
  // of the refill now, so that it tops the window up before it runs dry.
  bool half_used() const { return 2 * waiting_.size() <= high_; }

  // The run stops starting: the window closes for good. Returns the indices of the
  // conversations it held, in order, which go back to the controller unstarted.
  std::vector<uint64_t> close();

  bool closed() const { return closed_; }
  size_t size() const { return waiting_.size(); }

 private:
  std::deque<proto::Conversation> waiting_;  // in arrival order; refills take the front
  size_t high_ = 0;                          // the most waiting_ has held (high-water mark)
  bool closed_ = false;                      // set by close(); never cleared
};

}  // namespace convoy::worker
