#include "worker/prefill_cap.hpp"

#include <algorithm>
#include <utility>

namespace convoy::worker {

PrefillCap::PrefillCap(EventLoop& loop, std::unique_ptr<Transport> inner, int64_t cap)
    : loop_(loop), inner_(std::move(inner)), cap_(static_cast<size_t>(std::max<int64_t>(1, cap))) {}

PrefillCap::~PrefillCap() {
  if (pump_timer_ != 0) loop_.cancel_timer(pump_timer_);
}

Transport::RequestId PrefillCap::start(HttpRequest request, DoneCallback done) {
  Held held{next_id_++, std::move(request), std::move(done)};
  const RequestId id = held.id;
  if (waiting_.empty() && holding_.size() < cap_) {
    launch(std::move(held));
  } else {
    waiting_.push_back(std::move(held));
  }
  return id;
}

void PrefillCap::launch(Held held) {
  const RequestId id = held.id;
  holding_.insert(id);
  held.request.on_first_token = [this, id] { prefill_ended(id); };
  DoneCallback done = std::move(held.done);
  const RequestId inner_id = inner_->start(
      std::move(held.request), [this, id, done = std::move(done)](HttpResponse&& response) {
        started_.erase(id);
        prefill_ended(id);  // a reply without a first token holds its slot until its end
        done(std::move(response));
      });
  started_[id] = inner_id;
}

void PrefillCap::prefill_ended(RequestId id) {
  if (holding_.erase(id) == 0) return;
  if (pump_timer_ == 0) pump_timer_ = loop_.add_timer(0, [this] { pump(); });
}

void PrefillCap::pump() {
  pump_timer_ = 0;
  // Each callback may start or cancel requests: take one entry at a time.
  while (!cancelled_.empty()) {
    Held held = std::move(cancelled_.front());
    cancelled_.pop_front();
    HttpResponse r;
    r.sent_ns = r.end_ns = steady_now_ns();
    r.error = {proto::ErrorKind::kCancelled, 0, "", "cancelled while waiting for a prefill slot"};
    held.done(std::move(r));
  }
  while (!waiting_.empty() && holding_.size() < cap_) {
    Held held = std::move(waiting_.front());
    waiting_.pop_front();
    launch(std::move(held));
  }
}

void PrefillCap::cancel(RequestId id) {
  if (auto it = started_.find(id); it != started_.end()) {
    inner_->cancel(it->second);
    return;
  }
  auto it =
      std::find_if(waiting_.begin(), waiting_.end(), [id](const Held& h) { return h.id == id; });
  if (it == waiting_.end()) return;
  cancelled_.push_back(std::move(*it));
  waiting_.erase(it);
  if (pump_timer_ == 0) pump_timer_ = loop_.add_timer(0, [this] { pump(); });
}

void PrefillCap::cancel_all() {
  while (!waiting_.empty()) {
    cancelled_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  if (!cancelled_.empty() && pump_timer_ == 0) {
    pump_timer_ = loop_.add_timer(0, [this] { pump(); });
  }
  inner_->cancel_all();
}

size_t PrefillCap::in_flight() const {
  return inner_->in_flight() + waiting_.size() + cancelled_.size();
}

}  // namespace convoy::worker
