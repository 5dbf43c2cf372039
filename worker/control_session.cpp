#include "worker/control_session.hpp"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "common/curve.hpp"
#include "common/duration.hpp"
#include "common/log.hpp"
#include "common/zmq_util.hpp"
#include "proto/envelope.hpp"

namespace convoy::worker {

namespace {
constexpr int kControlLingerMs = 500;
constexpr int64_t kMinHeartbeatPeriodNs = 1'000'000;
constexpr int64_t kNsPerS = 1'000'000'000;
constexpr double kMaxRetryS = 86'400;  // a refusal's retry_s is believed up to a day
}  // namespace

void apply_worker_curve(zmq::socket_t& socket, const WorkerOptions& options) {
  if (options.curve_server_key.empty()) return;
  CurveKeyPair client = read_curve_key_file(options.curve_key);
  make_curve_client(socket, client, read_curve_key_file(options.curve_server_key).public_z85);
}

ControlSession::ControlSession(EventLoop& loop, zmq::context_t& context,
                               const WorkerOptions& options, std::string host, Handler& handler)
    : loop_(loop),
      options_(options),
      host_(std::move(host)),
      handler_(handler),
      socket_(context, zmq::socket_type::dealer),
      heartbeat_period_ns_(seconds_to_ns(options.heartbeat_period_s)) {}

ControlSession::~ControlSession() {
  if (heartbeat_fd_ >= 0) ::close(heartbeat_fd_);
}

void ControlSession::start() {
  configure_socket(socket_, kControlLingerMs);
  socket_.set(zmq::sockopt::routing_id, options_.id);
  apply_worker_curve(socket_, options_);
  enable_ipv6_for(socket_, options_.connect);
  socket_.connect(options_.connect);
  loop_.add_fd(socket_.get(zmq::sockopt::fd), EPOLLIN, [this](uint32_t) { drain(); });
  send_hello();
  start_heartbeat();
}

template <class T>
void ControlSession::send(const T& message) {
  std::string bytes = proto::encode(message);
  // DEALER queues while disconnected; a full queue drops (the heartbeat after it retries).
  (void)socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  drain();  // a send can consume the edge of ZMQ_FD: re-check for input
}

void ControlSession::drain() {
  if (draining_) return;
  draining_ = true;
  drain_socket(socket_, [&](zmq::message_t& message) { on_message(message); });
  draining_ = false;
}

void ControlSession::on_message(zmq::message_t& msg) {
  last_heard_ns_ = steady_now_ns();
  std::string error;
  auto d = proto::decode_in_place(msg.data(), msg.size(), &error);  // msg outlives d
  if (!d) {
    if (handler_.on_undecodable_assign(msg)) return;
    log_warn("dropped a malformed control message: ", log_escape(error));
    return;
  }
  switch (d->type) {
    case proto::MsgType::kWelcome:
      if (auto w = d->as<proto::Welcome>()) on_welcome(*w);
      break;
    case proto::MsgType::kReject:
      if (auto r = d->as<proto::Reject>()) on_reject(*r);
      break;
    case proto::MsgType::kPing:
      if (auto p = d->as<proto::Ping>()) {
        proto::Pong pong{p->seq, p->controller_send_ns, last_heard_ns_, 0};
        pong.worker_send_ns = steady_now_ns();
        send(pong);
      }
      break;
    case proto::MsgType::kHeartbeat:
      break;  // last_heard_ns_ is all it is for
    case proto::MsgType::kAssign:
      if (auto a = d->as<proto::Assign>()) {
        handler_.on_assign(*a);
      } else {
        handler_.on_undecodable_assign(msg);
      }
      break;
    case proto::MsgType::kStop:
      if (auto s = d->as<proto::Stop>()) handler_.on_stop(s->cancel);
      break;
    default:
      log_warn("dropped an unexpected ", proto::to_string(d->type), " message");
  }
}

void ControlSession::on_welcome(const proto::Welcome& w) {
  if (welcomed_) return;
  welcomed_ = true;
  token_ = w.token;
  set_log_prefix("convoy-worker " + options_.id);
  if (!handler_.on_welcome(w)) return;
  send_heartbeat();
  arm_silence_check();
}

// A refusal for good ends the worker (exit 2); one for want of a slot (retry_s > 0, e.g.
// peers squatting the controller's slots) keeps it saying hello until retry_s has passed.
void ControlSession::on_reject(const proto::Reject& r) {
  if (welcomed_) return;
  if (r.retry_s > 0 && std::isfinite(r.retry_s)) {
    if (retry_until_ns_ == 0) {
      log_warn("the controller has no slot for this worker yet: ", log_escape(r.reason, 1024),
               "; trying again for ", r.retry_s, " s");
      retry_until_ns_ = steady_now_ns() + seconds_to_ns(std::min(r.retry_s, kMaxRetryS));
      refused_reason_ = r.reason;
    }
    return;
  }
  log_error("the controller refused this worker: ", log_escape(r.reason, 1024));
  handler_.on_give_up(2);
}

void ControlSession::send_hello() {
  send(proto::Hello{proto::kProtocolVersion, options_.id, host_, ::getpid()});
}

void ControlSession::send_heartbeat() {
  proto::Heartbeat hb;
  const int64_t now = steady_now_ns();
  hb.sent_ns = now;
  handler_.fill_heartbeat(hb);
  hb.cpu_percent = cpu_.sample(now);
  hb.rss_bytes = resident_bytes();
  send(hb);
}

void ControlSession::start_heartbeat() {
  heartbeat_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (heartbeat_fd_ < 0) throw std::runtime_error("timerfd_create failed");
  itimerspec spec{};
  const int64_t period_ns = std::max(heartbeat_period_ns_, kMinHeartbeatPeriodNs);
  spec.it_interval.tv_sec = period_ns / kNsPerS;
  spec.it_interval.tv_nsec = period_ns % kNsPerS;
  spec.it_value = spec.it_interval;
  ::timerfd_settime(heartbeat_fd_, 0, &spec, nullptr);
  loop_.add_fd(heartbeat_fd_, EPOLLIN, [this](uint32_t) {
    uint64_t expirations = 0;
    [[maybe_unused]] auto n = ::read(heartbeat_fd_, &expirations, sizeof expirations);
    on_tick();
  });
}

void ControlSession::on_tick() {
  if (welcomed_) {
    send_heartbeat();
    return;
  }
  const int64_t now = steady_now_ns();
  if (retry_until_ns_ != 0 && now > retry_until_ns_) {
    log_error("the controller refused this worker until its retry time ran out: ",
              log_escape(refused_reason_, 1024));
    give_up(2);
    return;
  }
  if (retry_until_ns_ == 0 && now - started_ns_ > seconds_to_ns(options_.first_contact_timeout_s)) {
    log_error("no answer from the controller at ", options_.connect, " after ",
              options_.first_contact_timeout_s, " s; exiting");
    give_up(3);
    return;
  }
  // Say hello again: a controller that started after us never saw the first one.
  send_hello();
}

void ControlSession::give_up(int exit_code) {
  loop_.remove_fd(heartbeat_fd_);
  handler_.on_give_up(exit_code);
}

// Fires at last_heard_ns_ + controller_silence_s, not at the next 1 s tick after it: the
// promise is "exits 5 s after the controller goes quiet", not 6.
void ControlSession::arm_silence_check() {
  const int64_t silence_ns = seconds_to_ns(options_.controller_silence_s);
  loop_.add_timer(last_heard_ns_ + silence_ns, [this, silence_ns] {
    if (!watching_) return;
    if (steady_now_ns() - last_heard_ns_ < silence_ns) {
      arm_silence_check();
      return;
    }
    log_error("no word from the controller for ", options_.controller_silence_s,
              " s: cancelling every transfer and exiting");
    handler_.on_controller_lost();
  });
}

}  // namespace convoy::worker
