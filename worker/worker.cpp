#include "worker/worker.hpp"

#include <curl/curl.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <optional>
#include <stdexcept>
#include <zmq.hpp>

#include "common/curve.hpp"
#include "common/duration.hpp"
#include "common/log.hpp"
#include "common/zmq_util.hpp"
#include "proto/envelope.hpp"
#include "worker/conversation_runner.hpp"
#include "worker/http_client.hpp"
#include "worker/proc_stats.hpp"

namespace convoy::worker {

namespace {

// The results linger (WorkerOptions::results_linger_s) when the controller is gone: short, it
// bounds the exit after silence.
constexpr int kLostControllerLingerMs = 200;
constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kSendRetryNs = 10 * kNsPerMs;  // how soon a full results queue is retried

int64_t ns_of_seconds(double seconds) { return seconds_to_ns(seconds); }

// The self-pipe for signals: the handler only writes to an eventfd.
std::atomic<int> g_signal_fd{-1};

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

std::string reachable_endpoint(const std::string& advertised, const std::string& connect) {
  // A controller listening on a wildcard advertises tcp://0.0.0.0:PORT (or tcp://*:PORT):
  // reach it on the host this worker already reaches the controller at.
  for (const char* wildcard : {"tcp://0.0.0.0:", "tcp://*:", "tcp://[::]:"}) {
    std::string w = wildcard;
    if (advertised.rfind(w, 0) != 0 || connect.rfind("tcp://", 0) != 0) continue;
    size_t colon = connect.rfind(':');
    if (colon == std::string::npos || colon < 6) return advertised;
    return connect.substr(0, colon + 1) + advertised.substr(w.size());
  }
  return advertised;
}

struct Worker::Impl {
  WorkerOptions options;
  WorkerSeams seams;
  const int64_t heartbeat_period_ns;
  const int64_t flush_delay_ns;
  const int64_t shutdown_drain_ns;
  std::string host = hostname();
  EventLoop loop;
  std::optional<zmq::context_t> own_ctx;  // when none was injected
  zmq::context_t& ctx;
  zmq::socket_t control{ctx, zmq::socket_type::dealer};
  zmq::socket_t results{ctx, zmq::socket_type::push};
  int signal_fd = -1;
  // The heartbeat's periodic timerfd: a file descriptor, served every loop iteration, so a burst
  // of due timers (a family's sub-agents all starting) never delays a heartbeat by more than
  // kMaxTimersPerIteration of them.
  int heartbeat_fd = -1;

  std::unique_ptr<Transport> http;
  std::unique_ptr<ConversationRunner> runner;
  bool welcomed = false;
  bool shutting_down = false;
  int exit_code = 0;
  int64_t started_ns = steady_now_ns();
  // Refused for want of a free slot (Reject::retry_s): hellos go on until this deadline
  // (0 = never refused so).
  int64_t retry_until_ns = 0;
  std::string refused_reason;  // the refusal that set retry_until_ns
  int64_t last_heard_ns = 0;
  EventLoop::TimerId shutdown_timer = 0;  // the one deadline of the shutdown phase it is in
  bool shutdown_deadline_passed = false;
  bool bye_queued = false;  // the last batch and the Bye are in `unsent` or sent
  bool controller_lost = false;
  std::string token;        // from Welcome: proves our Results and Bye are ours
  uint64_t last_batch = 0;  // the last Assign batch number read
  // Concurrency refill (issue 19): conversations sharded here that wait for a slot this worker
  // frees (or the controller's start). Closed, and given back, once the run stops starting.
  std::deque<proto::Conversation> window;
  size_t window_high = 0;  // the most it has held: an end that leaves half of it is sent now
  bool window_closed = false;

  proto::Results batch;
  EventLoop::TimerId flush_timer = 0;
  bool flush_soon = false;  // flush_timer fires this loop iteration
  EventLoop::TimerId retry_timer = 0;
  std::vector<std::string> unsent;  // encoded batches the PUSH socket would not take yet
  CpuMeter cpu;

  Impl(WorkerOptions o, WorkerSeams s)
      : options(std::move(o)),
        seams(std::move(s)),
        heartbeat_period_ns(ns_of_seconds(options.heartbeat_period_s)),
        flush_delay_ns(ns_of_seconds(options.flush_interval_s)),
        shutdown_drain_ns(ns_of_seconds(options.shutdown_drain_s)),
        own_ctx(seams.context == nullptr ? std::optional<zmq::context_t>(std::in_place, 1)
                                         : std::nullopt),
        ctx(seams.context != nullptr ? *seams.context : *own_ctx) {
    if (options.id.empty()) options.id = host + "-" + std::to_string(::getpid());
    batch.worker_id = options.id;
  }

  ~Impl() {
    if (heartbeat_fd >= 0) ::close(heartbeat_fd);
    if (signal_fd >= 0) {
      g_signal_fd = -1;
      ::close(signal_fd);
    }
  }

  int results_linger_ms() const {
    if (controller_lost) return kLostControllerLingerMs;
    return static_cast<int>(options.results_linger_s * 1000);
  }

  void apply_curve(zmq::socket_t& socket) {
    if (options.curve_server_key.empty()) return;
    CurveKeyPair client = read_curve_key_file(options.curve_key);
    make_curve_client(socket, client, read_curve_key_file(options.curve_server_key).public_z85);
  }

  // --- control socket ---

  template <class T>
  void send_control(const T& msg) {
    std::string bytes = proto::encode(msg);
    // DEALER queues while disconnected; a full queue drops (the heartbeat after it retries).
    (void)control.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    drain_control();  // a send can consume the edge of ZMQ_FD: re-check for input
  }

  bool draining_ = false;
  void drain_control() {
    if (draining_) return;
    draining_ = true;
    drain_socket(control, [&](zmq::message_t& msg) { on_control(msg); });
    draining_ = false;
  }

  void on_control(zmq::message_t& msg) {
    last_heard_ns = steady_now_ns();
    std::string error;
    auto d = proto::decode_in_place(msg.data(), msg.size(), &error);  // msg outlives d
    if (!d) {
      if (salvage_assign(msg)) return;
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
          proto::Pong pong{p->seq, p->controller_send_ns, last_heard_ns, 0};
          pong.worker_send_ns = steady_now_ns();
          send_control(pong);
        }
        break;
      case proto::MsgType::kHeartbeat:
        break;  // last_heard_ns is all it is for
      case proto::MsgType::kAssign:
        if (!runner) break;
        if (auto a = d->as<proto::Assign>()) {
          on_assign(*a);
        } else {
          salvage_assign(msg);
        }
        break;
      case proto::MsgType::kStop:
        if (auto s = d->as<proto::Stop>()) on_stop(s->cancel);
        break;
      default:
        log_warn("dropped an unexpected ", proto::to_string(d->type), " message");
    }
  }

  // A refusal for good ends the worker (exit 2); one for want of a slot (retry_s > 0, e.g.
  // peers squatting the controller's slots) keeps it saying hello until retry_s has passed.
  void on_reject(const proto::Reject& r) {
    if (welcomed) return;
    if (r.retry_s > 0 && std::isfinite(r.retry_s)) {
      if (retry_until_ns == 0) {
        log_warn("the controller has no slot for this worker yet: ", log_escape(r.reason, 1024),
                 "; trying again for ", r.retry_s, " s");
        retry_until_ns = steady_now_ns() + ns_of_seconds(std::min(r.retry_s, 86'400.0));
        refused_reason = r.reason;
      }
      return;
    }
    log_error("the controller refused this worker: ", log_escape(r.reason, 1024));
    exit_code = 2;
    loop.stop();
  }

  void on_assign(proto::Assign& a) {
    if (a.batch != 0) last_batch = a.batch;
    take(a.conversations, a.window);
    apply_starts(a.start);
  }

  // Conversations of one Assign: started now (their start time), or into the window.
  void take(std::vector<proto::Conversation>& conversations, bool to_window) {
    for (auto& c : conversations) {
      if (!to_window) {
        runner->assign(std::move(c));
      } else if (window_closed) {
        batch.returned.push_back(c.index);
        arm_flush(/*this_iteration=*/true);
      } else {
        window.push_back(std::move(c));
      }
    }
    window_high = std::max(window_high, window.size());
  }

  // The window conversation `index`, taken out of the window; nullopt when it is not there.
  std::optional<proto::Conversation> take_from_window(uint64_t index) {
    auto it = std::find_if(window.begin(), window.end(),
                           [&](const proto::Conversation& c) { return c.index == index; });
    if (it == window.end()) return std::nullopt;
    proto::Conversation c = std::move(*it);
    window.erase(it);
    return c;
  }

  // Starts name window conversations; one already started here (a refill crossed the start)
  // or given back is not there any more.
  void apply_starts(const std::vector<proto::WindowStart>& starts) {
    for (const proto::WindowStart& s : starts) {
      auto c = take_from_window(s.conversation_index);
      if (!c) continue;
      c->start_ns = s.start_ns;
      runner->assign(std::move(*c));
    }
  }

  // The run stops starting: every window conversation goes back unstarted.
  void close_window() {
    window_closed = true;
    if (window.empty()) return;
    for (const auto& c : window) batch.returned.push_back(c.index);
    window.clear();
    arm_flush(/*this_iteration=*/true);
  }

  // An Assign that did not decode as a whole: run (or put in the window) the conversations
  // that decode on their own and report the rest as failed, so the controller is not left
  // waiting for them. False when `msg` is not an Assign at all.
  bool salvage_assign(const zmq::message_t& msg) {
    auto s = proto::salvage_assign(msg.data(), msg.size());
    if (!s) return false;
    if (!runner) return true;
    // Batches arrive in order: one whose number is unreadable is the one after the last read.
    const uint64_t number = s->batch != 0 ? s->batch : last_batch + 1;
    last_batch = number;
    if (s->undecodable) {
      s->undecodable->batch = number;
      const auto& u = *s->undecodable;
      log_error("assignment batch ", number, ": ",
                u.unreadable_from >= 0
                    ? "conversations from position " + std::to_string(u.unreadable_from) + " on"
                    : std::to_string(u.positions.size()) + " conversation(s)",
                " unreadable (", log_escape(u.error), "); reported as failed");
      batch.undecodable.push_back(std::move(*s->undecodable));
    }
    // A window batch's conversations wait in the window like any other's: started outside the
    // slots they would take the run over load.concurrency. Where the flag is unreadable they
    // can be placed nowhere.
    if (!s->window) {
      for (const auto& c : s->conversations) {
        s->failed.push_back({c.index, "the assignment's window flag is unreadable"});
      }
      s->conversations.clear();
    }
    take(s->conversations, s->window.value_or(false));
    // A start that did not decode: the controller gave that conversation a slot, which the
    // failure gives back (unless the conversation is no longer waiting here).
    for (uint64_t index : s->unreadable_starts) {
      if (take_from_window(index)) s->failed.push_back({index, "its window start is unreadable"});
    }
    for (auto& f : s->failed) {
      log_error("conversation ", f.conversation_index, " of batch ", number,
                " cannot run: ", log_escape(f.error), "; reported as failed");
      batch.failed.push_back(std::move(f));
    }
    apply_starts(s->start);
    arm_flush(/*this_iteration=*/true);
    return true;
  }

  void on_welcome(const proto::Welcome& w) {
    if (welcomed) return;
    welcomed = true;
    token = w.token;
    batch.token = token;
    set_log_prefix("convoy-worker " + options.id);
    try {
      configure_socket(results, results_linger_ms());
      if (seams.results_send_hwm > 0) results.set(zmq::sockopt::sndhwm, seams.results_send_hwm);
      apply_curve(results);
      const std::string results_at = reachable_endpoint(w.results_endpoint, options.connect);
      enable_ipv6_for(results, results_at);
      results.connect(results_at);
      http = seams.make_transport ? seams.make_transport(loop) : std::make_unique<HttpClient>(loop);
      RunnerSink sink{[this](proto::Record&& r) { on_record(std::move(r)); },
                      [this](const proto::ConversationEnd& e) { on_end(e); }};
      runner = std::make_unique<ConversationRunner>(loop, *http, w.settings, options.id,
                                                    std::move(sink));
    } catch (const std::exception& e) {
      log_error("cannot start the run: ", e.what());
      exit_code = 2;
      loop.stop();
      return;
    }
    if (w.settings.insecure) log_warn("TLS certificate verification is OFF (target.insecure)");
    if (w.settings.http2 && !h2c_reuse_supported() &&
        ::strncasecmp(w.settings.url.c_str(), "http://", 7) == 0) {
      log_warn("libcurl ", curl_version_info(CURLVERSION_NOW)->version,
               " cannot reuse HTTP/2 prior-knowledge (http://) connections (curl issue 10634, "
               "fixed in 8.0.0): every request opens its own connection. https:// targets "
               "multiplex normally.");
    }
    log_info("joined run ", log_escape(w.run_id), " (target ", log_escape(w.settings.url), ")");
    send_heartbeat();
    arm_silence_check();
  }

  void on_stop(bool cancel) {
    if (!runner) {
      begin_shutdown();
      return;
    }
    close_window();
    if (cancel) {
      begin_shutdown();
    } else {
      runner->stop_starting();
    }
  }

  // Cancel everything, wait (bounded) for the cancelled transfers' records, flush, say bye.
  // Event-driven: each conversation's end calls maybe_finish() (the last transfer's callback
  // ends the last conversation), so does each retry of batches the PUSH socket refused; one
  // deadline per phase bounds the wait (drain: shutdown_drain_s; send: the results linger).
  void begin_shutdown() {
    if (shutting_down) return;
    shutting_down = true;
    close_window();
    arm_shutdown_deadline(shutdown_drain_ns);
    if (runner) runner->cancel_all();
    maybe_finish();
  }

  void arm_shutdown_deadline(int64_t after_ns) {
    if (shutdown_timer) loop.cancel_timer(shutdown_timer);
    shutdown_deadline_passed = false;
    shutdown_timer = loop.add_timer(steady_now_ns() + after_ns, [this] {
      shutdown_timer = 0;
      shutdown_deadline_passed = true;
      maybe_finish();
    });
  }

  void maybe_finish() {
    if (!shutting_down) return;
    if (!bye_queued) {
      const bool idle = !runner || (runner->active_conversations() == 0 && http->in_flight() == 0);
      if (!idle && !shutdown_deadline_passed) return;  // the next end or the deadline comes back
      flush();
      bye_queued = true;
      // Bye travels on the results socket, after every batch, so nothing is counted missing.
      if (welcomed) {
        proto::Bye bye{options.id, token, exit_code == 0 ? "done" : "stopped", 0};
        if (runner) bye.legacy_open_sessions = static_cast<int64_t>(runner->legacy_open_sessions());
        unsent.push_back(proto::encode(bye));
        send_unsent();
      }
      if (!unsent.empty()) {
        // The PUSH queue is full: the retry timer keeps offering the rest until this deadline.
        arm_shutdown_deadline(results_linger_ms() * kNsPerMs);
        return;
      }
    }
    if (!unsent.empty() && !shutdown_deadline_passed) return;
    if (!unsent.empty()) {
      log_warn(unsent.size(), " result message(s) not taken by the results socket in time");
    }
    if (shutdown_timer) loop.cancel_timer(shutdown_timer);
    shutdown_timer = 0;
    loop.stop();
  }

  // --- results ---

  void on_record(proto::Record&& r) {
    batch.records.push_back(std::move(r));
    if (batch.records.size() >= options.max_batch_records) {
      flush();
    } else {
      arm_flush();
    }
  }

  void on_end(const proto::ConversationEnd& e) {
    batch.ended.push_back(e);
    if (!window_closed && !window.empty() && runner) {
      // The freed slot stays here: the window's next conversation starts in it now, intended
      // at this end. The end can wait for the batch (the slot is not the controller's to give)
      // until half the window is used, so the controller tops it up before it runs dry.
      proto::Conversation next = std::move(window.front());
      window.pop_front();
      batch.ended.back().refilled_by = static_cast<int64_t>(next.index);
      next.start_ns = steady_now_ns();
      runner->assign(std::move(next));
      arm_flush(/*this_iteration=*/2 * window.size() <= window_high);
      return;
    }
    // An end frees a concurrency slot at the controller: send it with whatever else this loop
    // iteration produced, not up to flush_interval_s later (that delay idled the slot).
    arm_flush(/*this_iteration=*/true);
    if (shutting_down) maybe_finish();
  }

  void arm_flush(bool this_iteration = false) {
    if (flush_timer && (flush_soon || !this_iteration)) return;
    if (flush_timer) loop.cancel_timer(flush_timer);
    flush_soon = this_iteration;
    // Deadline 0: after every ready fd of this iteration, so one batch carries them all.
    flush_timer = loop.add_timer(this_iteration ? 0 : steady_now_ns() + flush_delay_ns, [this] {
      flush_timer = 0;
      flush();
    });
  }

  void flush() {
    if (flush_timer) {
      loop.cancel_timer(flush_timer);
      flush_timer = 0;
    }
    if (bye_queued) return;  // nothing follows the Bye (late records are lost either way)
    if (batch.records.empty() && batch.ended.empty() && batch.failed.empty() &&
        batch.undecodable.empty() && batch.returned.empty()) {
      return;
    }
    unsent.push_back(proto::encode(batch));
    batch.records.clear();
    batch.ended.clear();
    batch.failed.clear();
    batch.undecodable.clear();
    batch.returned.clear();
    send_unsent();
  }

  // Offers the queued batches to the PUSH socket in order; what it refuses (high-water mark)
  // is offered again kSendRetryNs later, so nothing is dropped and order is kept.
  void send_unsent() {
    size_t sent = 0;
    for (; sent < unsent.size(); ++sent) {
      if (!results.send(zmq::buffer(unsent[sent]), zmq::send_flags::dontwait)) break;
    }
    unsent.erase(unsent.begin(), unsent.begin() + static_cast<ptrdiff_t>(sent));
    if (!unsent.empty() && !retry_timer) {
      retry_timer = loop.add_timer(steady_now_ns() + kSendRetryNs, [this] {
        retry_timer = 0;
        send_unsent();
        if (bye_queued) maybe_finish();
      });
    }
  }

  // --- liveness ---

  void send_heartbeat() {
    proto::Heartbeat hb;
    int64_t now = steady_now_ns();
    hb.sent_ns = now;
    if (runner) {
      hb.in_flight_requests = static_cast<int64_t>(runner->in_flight_requests());
      hb.active_conversations = static_cast<int64_t>(runner->active_conversations());
      hb.legacy_open_sessions = static_cast<int64_t>(runner->legacy_open_sessions());
    }
    hb.cpu_percent = cpu.sample(now);
    hb.rss_bytes = resident_bytes();
    send_control(hb);
  }

  void start_heartbeat() {
    heartbeat_fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (heartbeat_fd < 0) throw std::runtime_error("timerfd_create failed");
    itimerspec spec{};
    const int64_t period_ns = std::max<int64_t>(heartbeat_period_ns, 1'000'000);
    spec.it_interval.tv_sec = period_ns / 1'000'000'000;
    spec.it_interval.tv_nsec = period_ns % 1'000'000'000;
    spec.it_value = spec.it_interval;
    ::timerfd_settime(heartbeat_fd, 0, &spec, nullptr);
    loop.add_fd(heartbeat_fd, EPOLLIN, [this](uint32_t) {
      uint64_t expirations = 0;
      [[maybe_unused]] auto n = ::read(heartbeat_fd, &expirations, sizeof expirations);
      on_tick();
    });
  }

  void on_tick() {
    int64_t now = steady_now_ns();
    if (!welcomed) {
      if (retry_until_ns != 0 && now > retry_until_ns) {
        log_error("the controller refused this worker until its retry time ran out: ",
                  log_escape(refused_reason, 1024));
        exit_code = 2;
        loop.remove_fd(heartbeat_fd);
        loop.stop();
        return;
      }
      if (retry_until_ns == 0 &&
          now - started_ns > ns_of_seconds(options.first_contact_timeout_s)) {
        log_error("no answer from the controller at ", options.connect, " after ",
                  options.first_contact_timeout_s, " s; exiting");
        exit_code = 3;
        loop.remove_fd(heartbeat_fd);
        loop.stop();
        return;
      }
      // Say hello again: a controller that started after us never saw the first one.
      send_control(proto::Hello{proto::kProtocolVersion, options.id, host, ::getpid()});
    } else {
      send_heartbeat();
    }
  }

  // Fires at last_heard_ns + controller_silence_s, not at the next 1 s tick after it: the
  // promise is "exits 5 s after the controller goes quiet", not 6.
  void arm_silence_check() {
    const int64_t silence_ns = ns_of_seconds(options.controller_silence_s);
    loop.add_timer(last_heard_ns + silence_ns, [this, silence_ns] {
      if (shutting_down) return;
      if (steady_now_ns() - last_heard_ns < silence_ns) {
        arm_silence_check();
        return;
      }
      log_error("no word from the controller for ", options.controller_silence_s,
                " s: cancelling every transfer and exiting");
      exit_code = 3;
      controller_lost = true;
      begin_shutdown();
    });
  }

  int run() {
    configure_socket(control, 500);
    control.set(zmq::sockopt::routing_id, options.id);
    apply_curve(control);
    enable_ipv6_for(control, options.connect);
    control.connect(options.connect);
    loop.add_fd(control.get(zmq::sockopt::fd), EPOLLIN, [this](uint32_t) { drain_control(); });

    signal_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    g_signal_fd = signal_fd;
    loop.add_fd(signal_fd, EPOLLIN, [this](uint32_t) {
      uint64_t v;
      [[maybe_unused]] auto n = ::read(signal_fd, &v, sizeof v);
      log_info("signal received: cancelling and exiting");
      if (exit_code == 0) exit_code = 130;
      begin_shutdown();
    });

    send_control(proto::Hello{proto::kProtocolVersion, options.id, host, ::getpid()});
    start_heartbeat();
    loop.run();
    runner.reset();
    http.reset();
    // Nothing that matters is left on the control socket; the results socket may still be
    // flushing the Bye, briefly when nobody is there to take it.
    control.set(zmq::sockopt::linger, 0);
    results.set(zmq::sockopt::linger, results_linger_ms());
    return exit_code;
  }
};

Worker::Worker(WorkerOptions options, WorkerSeams seams)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(seams))) {}
Worker::~Worker() = default;

int Worker::run() { return impl_->run(); }

void Worker::request_stop_from_signal() {
  int fd = g_signal_fd.load();
  if (fd < 0) return;
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
}

}  // namespace convoy::worker
