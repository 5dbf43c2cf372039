// A Transport for tests: no sockets, no curl. It keeps the real contract (worker/transport.hpp):
// `done` runs once, from the loop, never inside start(); cancel() delivers kCancelled on a later
// iteration and in_flight() counts the request until then. Requests wait until the test
// completes them, or are answered on the next iteration when `auto_reply` is set.
#pragma once

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/event_loop.hpp"
#include "worker/transport.hpp"

namespace convoy::worker::test {

// A count another thread can wait on: the transport adds to it on the worker's loop, a test
// waits until it reaches n (woken by each add, not by polling) or its deadline passes.
class DeliveryCount {
 public:
  void add() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++count_;
    }
    changed_.notify_all();
  }
  size_t value() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_;
  }
  // True when the count reached `n` within `timeout`.
  bool wait_for(size_t n, std::chrono::nanoseconds timeout) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return count_ >= n; });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  size_t count_ = 0;
};

class FakeTransport final : public Transport {
 public:
  struct Started {
    RequestId id = 0;
    HttpRequest request;
    int64_t started_ns = 0;  // steady_now_ns() inside start()
  };

  explicit FakeTransport(EventLoop& loop) : loop_(loop) {}
  ~FakeTransport() override {
    if (deliver_timer_ != 0) loop_.cancel_timer(deliver_timer_);
    for (auto& [id, p] : pending_) {
      if (p.cancel_timer != 0) loop_.cancel_timer(p.cancel_timer);
    }
  }
  FakeTransport(const FakeTransport&) = delete;
  FakeTransport& operator=(const FakeTransport&) = delete;

  // When set, every request is answered on the next loop iteration with this response (its
  // sent_ns and end_ns are filled in when left 0).
  std::function<HttpResponse(const HttpRequest&)> auto_reply;
  // When set, counts the `done` callbacks that ran (readable from another thread).
  DeliveryCount* delivered_counter = nullptr;

  RequestId start(HttpRequest request, DoneCallback done) override {
    const RequestId id = next_id_++;
    const int64_t now = steady_now_ns();
    started_.push_back({id, request, now});
    Pending p;
    p.done = std::move(done);
    p.sent_ns = now;
    if (request.cancel_after_ms >= 0) {
      const auto after_ns = static_cast<int64_t>(std::llround(request.cancel_after_ms * 1e6));
      p.cancel_timer = loop_.add_timer(now + after_ns, [this, id] {
        pending_.at(id).cancel_timer = 0;
        cancel(id);
      });
    }
    if (auto_reply) {
      HttpResponse r = auto_reply(request);
      pending_.emplace(id, std::move(p));
      finish(id, std::move(r));
    } else {
      pending_.emplace(id, std::move(p));
    }
    return id;
  }

  void cancel(RequestId id) override {
    HttpResponse r;
    r.error.kind = proto::ErrorKind::kCancelled;
    r.error.message = "cancelled by the fake";
    r.request_reached_server = true;
    if (finish(id, std::move(r))) ++cancels_;
  }

  void cancel_all() override {
    ++cancel_all_calls_;
    std::vector<RequestId> ids;
    for (const auto& [id, p] : pending_) ids.push_back(id);
    for (RequestId id : ids) cancel(id);
  }

  size_t in_flight() const override { return pending_.size() + deferred_.size(); }

  // Delivers `response` for a request still pending, on the next loop iteration. Returns false
  // for an unknown or already finished id.
  bool complete(RequestId id, HttpResponse response) { return finish(id, std::move(response)); }

  // A successful reply with this text (usage reported, status 200).
  static HttpResponse ok(std::string reply_text = "ok") {
    HttpResponse r;
    r.http_status = 200;
    r.reply_text = std::move(reply_text);
    r.content_events = 1;
    r.request_reached_server = true;
    return r;
  }

  const std::vector<Started>& started() const { return started_; }
  std::vector<RequestId> pending_ids() const {
    std::vector<RequestId> ids;
    for (const auto& [id, p] : pending_) ids.push_back(id);
    return ids;
  }
  size_t cancels() const { return cancels_; }
  size_t cancel_all_calls() const { return cancel_all_calls_; }

 private:
  struct Pending {
    DoneCallback done;
    int64_t sent_ns = 0;
    EventLoop::TimerId cancel_timer = 0;
  };

  bool finish(RequestId id, HttpResponse response) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return false;
    Pending p = std::move(it->second);
    pending_.erase(it);
    if (p.cancel_timer != 0) loop_.cancel_timer(p.cancel_timer);
    if (response.sent_ns == 0) response.sent_ns = p.sent_ns;
    if (response.end_ns == 0) response.end_ns = steady_now_ns();
    deferred_.emplace_back(std::move(p.done), std::move(response));
    if (deliver_timer_ == 0) {
      deliver_timer_ = loop_.add_timer(0, [this] {
        deliver_timer_ = 0;
        std::vector<std::pair<DoneCallback, HttpResponse>> batch;
        batch.swap(deferred_);
        for (auto& [done, r] : batch) {
          done(std::move(r));
          if (delivered_counter != nullptr) delivered_counter->add();
        }
      });
    }
    return true;
  }

  EventLoop& loop_;
  RequestId next_id_ = 1;
  std::map<RequestId, Pending> pending_;
  std::vector<std::pair<DoneCallback, HttpResponse>> deferred_;
  EventLoop::TimerId deliver_timer_ = 0;
  std::vector<Started> started_;
  size_t cancels_ = 0;
  size_t cancel_all_calls_ = 0;
};

}  // namespace convoy::worker::test
