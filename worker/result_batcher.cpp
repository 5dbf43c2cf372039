#include "worker/result_batcher.hpp"

#include <utility>

#include "proto/envelope.hpp"

namespace convoy::worker {

ResultBatcher::ResultBatcher(EventLoop& loop, Send send, Settings settings,
                             std::function<void()> after_retry)
    : loop_(loop),
      send_(std::move(send)),
      settings_(std::move(settings)),
      after_retry_(std::move(after_retry)) {
  batch_.worker_id = settings_.worker_id;
}

ResultBatcher::~ResultBatcher() {
  if (flush_timer_) loop_.cancel_timer(flush_timer_);
  if (retry_timer_) loop_.cancel_timer(retry_timer_);
}

void ResultBatcher::add_record(proto::Record&& record) {
  batch_.records.push_back(std::move(record));
  if (batch_.records.size() >= settings_.max_batch_records) {
    flush();
  } else {
    arm_flush(false);
  }
}

void ResultBatcher::add_end(const proto::ConversationEnd& end, bool send_now) {
  batch_.ended.push_back(end);
  arm_flush(send_now);
}

void ResultBatcher::add_returned(uint64_t conversation_index) {
  batch_.returned.push_back(conversation_index);
  arm_flush(true);
}

void ResultBatcher::add_failed(proto::FailedConversation&& failed) {
  batch_.failed.push_back(std::move(failed));
}

void ResultBatcher::add_undecodable(proto::UndecodableAssign&& undecodable) {
  batch_.undecodable.push_back(std::move(undecodable));
}

void ResultBatcher::arm_flush(bool this_iteration) {
  if (flush_timer_ && (flush_soon_ || !this_iteration)) return;
  if (flush_timer_) loop_.cancel_timer(flush_timer_);
  flush_soon_ = this_iteration;
  // Deadline 0: after every ready fd of this iteration, so one batch carries them all.
  const int64_t deadline_ns = this_iteration ? 0 : steady_now_ns() + settings_.flush_delay_ns;
  flush_timer_ = loop_.add_timer(deadline_ns, [this] {
    flush_timer_ = 0;
    flush();
  });
}

void ResultBatcher::flush() {
  if (flush_timer_) {
    loop_.cancel_timer(flush_timer_);
    flush_timer_ = 0;
  }
  if (finished_) return;  // nothing follows the Bye (late records are lost either way)
  if (batch_.records.empty() && batch_.ended.empty() && batch_.failed.empty() &&
      batch_.undecodable.empty() && batch_.returned.empty()) {
    return;
  }
  unsent_.push_back(proto::encode(batch_));
  batch_.records.clear();
  batch_.ended.clear();
  batch_.failed.clear();
  batch_.undecodable.clear();
  batch_.returned.clear();
  send_unsent();
}

void ResultBatcher::finish(const proto::Bye* bye) {
  flush();
  finished_ = true;
  if (bye == nullptr) return;
  unsent_.push_back(proto::encode(*bye));
  send_unsent();
}

// Offers the queued messages to the socket in order; what it refuses is offered again
// kResultsRetryNs later, so nothing is dropped and order is kept.
void ResultBatcher::send_unsent() {
  size_t sent = 0;
  for (; sent < unsent_.size(); ++sent) {
    if (!send_(unsent_[sent])) break;
  }
  unsent_.erase(unsent_.begin(), unsent_.begin() + static_cast<ptrdiff_t>(sent));
  if (unsent_.empty() || retry_timer_) return;
  retry_timer_ = loop_.add_timer(steady_now_ns() + kResultsRetryNs, [this] {
    retry_timer_ = 0;
    send_unsent();
    if (finished_ && after_retry_) after_retry_();
  });
}

}  // namespace convoy::worker
