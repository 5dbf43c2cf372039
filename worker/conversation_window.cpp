#include "worker/conversation_window.hpp"

#include <algorithm>
#include <utility>

namespace convoy::worker {

bool ConversationWindow::add(proto::Conversation& c) {
  if (closed_) return false;
  waiting_.push_back(std::move(c));
  high_ = std::max(high_, waiting_.size());
  return true;
}

std::optional<proto::Conversation> ConversationWindow::take(uint64_t index) {
  auto it = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](const proto::Conversation& c) { return c.index == index; });
  if (it == waiting_.end()) return std::nullopt;
  proto::Conversation c = std::move(*it);
  waiting_.erase(it);
  return c;
}

std::optional<proto::Conversation> ConversationWindow::refill() {
  if (closed_ || waiting_.empty()) return std::nullopt;
  proto::Conversation c = std::move(waiting_.front());
  waiting_.pop_front();
  return c;
}

std::vector<uint64_t> ConversationWindow::close() {
  closed_ = true;
  std::vector<uint64_t> indices;
  indices.reserve(waiting_.size());
  for (const proto::Conversation& c : waiting_) indices.push_back(c.index);
  waiting_.clear();
  return indices;
}

}  // namespace convoy::worker
