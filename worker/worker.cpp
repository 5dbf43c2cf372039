#include "worker/worker.hpp"

#include <curl/curl.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <zmq.hpp>

#include "common/duration.hpp"
#include "common/log.hpp"
#include "common/redact.hpp"
#include "common/zmq_util.hpp"
#include "proto/envelope.hpp"
#include "worker/control_session.hpp"
#include "worker/conversation_runner.hpp"
#include "worker/conversation_window.hpp"
#include "worker/http_client.hpp"
#include "worker/prefill_cap.hpp"
#include "worker/result_batcher.hpp"

namespace convoy::worker {

namespace {

// The results linger (WorkerOptions::results_linger_s) when the controller is gone: short, it
// bounds the exit after silence.
constexpr int kLostControllerLingerMs = 200;
constexpr int64_t kNsPerMs = 1'000'000;

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

// The wiring: the control session's events drive the conversation runner, the window and the
// result batcher; the shutdown phases bound the end.
struct Worker::Impl final : ControlSession::Handler {
  WorkerOptions options;
  WorkerSeams seams;
  EventLoop loop;
  std::optional<zmq::context_t> own_ctx;  // when none was injected
  zmq::context_t& ctx;
  zmq::socket_t results{ctx, zmq::socket_type::push};
  ControlSession control;
  ResultBatcher batcher;
  ConversationWindow window;
  std::unique_ptr<Transport> http;             // from the Welcome on
  std::unique_ptr<ConversationRunner> runner;  // from the Welcome on
  int signal_fd = -1;                          // the signal handler's eventfd (-1: none)
  int exit_code = 0;             // 0 done, 2 refused or cannot start, 3 controller lost, 130 signal
  bool shutting_down = false;    // begin_shutdown() ran: cancel, drain, Bye, stop
  bool controller_lost = false;  // the results linger shrinks to kLostControllerLingerMs
  EventLoop::TimerId shutdown_timer = 0;  // the one deadline of the shutdown phase it is in
  bool shutdown_deadline_passed = false;
  uint64_t last_batch = 0;           // the last Assign batch number read
  int64_t settings_user_gap_ns = 0;  // load.mode users: a refill starts this long after the end

  Impl(WorkerOptions o, WorkerSeams s, const std::string& host)
      : options(with_default_id(std::move(o), host)),
        seams(std::move(s)),
        own_ctx(seams.context == nullptr ? std::optional<zmq::context_t>(std::in_place, 1)
                                         : std::nullopt),
        ctx(seams.context != nullptr ? *seams.context : *own_ctx),
        control(loop, ctx, options, host, *this),
        batcher(
            loop, [this](const std::string& bytes) { return send_result(bytes); },
            {options.id, seconds_to_ns(options.flush_interval_s), options.max_batch_records},
            [this] { maybe_finish(); }) {}

  ~Impl() {
    if (signal_fd >= 0) {
      g_signal_fd = -1;
      ::close(signal_fd);
    }
  }

  static WorkerOptions with_default_id(WorkerOptions o, const std::string& host) {
    if (o.id.empty()) o.id = host + "-" + std::to_string(::getpid());
    return o;
  }

  int results_linger_ms() const {
    if (controller_lost) return kLostControllerLingerMs;
    return static_cast<int>(options.results_linger_s * 1000);
  }

  bool send_result(const std::string& bytes) {
    return results.send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
  }

  // --- what the control session hands over ---

  bool on_welcome(const proto::Welcome& w) override {
    batcher.set_token(w.token);
    try {
      configure_socket(results, results_linger_ms());
      if (seams.results_send_hwm > 0) results.set(zmq::sockopt::sndhwm, seams.results_send_hwm);
      apply_worker_curve(results, options);
      const std::string results_at = reachable_endpoint(w.results_endpoint, options.connect);
      enable_ipv6_for(results, results_at);
      results.connect(results_at);
      http = seams.make_transport ? seams.make_transport(loop) : std::make_unique<HttpClient>(loop);
      if (w.settings.prefill_concurrency > 0) {
        http = std::make_unique<PrefillCap>(loop, std::move(http), w.settings.prefill_concurrency);
      }
      settings_user_gap_ns = w.settings.user_gap_ns;
      RunnerSink sink{[this](proto::Record&& r) { batcher.add_record(std::move(r)); },
                      [this](const proto::ConversationEnd& e) { on_end(e); }};
      runner = std::make_unique<ConversationRunner>(loop, *http, w.settings, options.id,
                                                    std::move(sink));
    } catch (const std::exception& e) {
      log_error("cannot start the run: ", e.what());
      on_give_up(2);
      return false;
    }
    if (w.settings.insecure) log_warn("TLS certificate verification is OFF (target.insecure)");
    if (w.settings.http2 && !h2c_reuse_supported() &&
        ::strncasecmp(w.settings.url.c_str(), "http://", 7) == 0) {
      log_warn("libcurl ", curl_version_info(CURLVERSION_NOW)->version,
               " cannot reuse HTTP/2 prior-knowledge (http://) connections (curl issue 10634, "
               "fixed in 8.0.0): every request opens its own connection. https:// targets "
               "multiplex normally.");
    }
    // Over ipc:// the controller is on this host and says its workers are ready in one line.
    const LogLevel level =
        options.connect.rfind("ipc://", 0) == 0 ? LogLevel::kDebug : LogLevel::kInfo;
    if (log_level() <= level) {
      log_line(level, detail::concat("joined run ", log_escape(w.run_id), " (target ",
                                     log_escape(redact_url(w.settings.url)), ")"));
    }
    return true;
  }

  void on_assign(proto::Assign& a) override {
    if (!runner) return;
    if (a.batch != 0) last_batch = a.batch;
    take(a.conversations, a.window);
    apply_starts(a.start);
  }

  void on_stop(bool cancel) override {
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

  void on_give_up(int code) override {
    exit_code = code;
    loop.stop();
  }

  void on_controller_lost() override {
    exit_code = 3;
    controller_lost = true;
    begin_shutdown();
  }

  void fill_heartbeat(proto::Heartbeat& hb) override {
    if (!runner) return;
    hb.in_flight_requests = static_cast<int64_t>(runner->in_flight_requests());
    hb.active_conversations = static_cast<int64_t>(runner->active_conversations());
    hb.legacy_open_sessions = static_cast<int64_t>(runner->legacy_open_sessions());
  }

  // --- the refill window ---

  // Conversations of one Assign: started now (their start time), or into the window.
  void take(std::vector<proto::Conversation>& conversations, bool to_window) {
    for (auto& c : conversations) {
      if (!to_window) {
        runner->assign(std::move(c));
      } else if (!window.add(c)) {
        batcher.add_returned(c.index);  // the run stopped starting: back unstarted
      }
    }
  }

  // Starts name window conversations; one already started here (a refill crossed the start)
  // or given back is not there any more.
  void apply_starts(const std::vector<proto::WindowStart>& starts) {
    for (const proto::WindowStart& s : starts) {
      auto c = window.take(s.conversation_index);
      if (!c) continue;
      c->start_ns = s.start_ns;
      runner->assign(std::move(*c));
    }
  }

  // The run stops starting: every window conversation goes back unstarted.
  void close_window() {
    for (uint64_t index : window.close()) batcher.add_returned(index);
  }

  // An Assign that did not decode as a whole: run (or put in the window) the conversations
  // that decode on their own and report the rest as failed, so the controller is not left
  // waiting for them. False when `msg` is not an Assign at all.
  bool on_undecodable_assign(const zmq::message_t& msg) override {
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
      batcher.add_undecodable(std::move(*s->undecodable));
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
      if (window.take(index)) s->failed.push_back({index, "its window start is unreadable"});
    }
    for (auto& f : s->failed) {
      log_error("conversation ", f.conversation_index, " of batch ", number,
                " cannot run: ", log_escape(f.error), "; reported as failed");
      batcher.add_failed(std::move(f));
    }
    apply_starts(s->start);
    batcher.send_this_iteration();
    return true;
  }

  void on_end(const proto::ConversationEnd& e) {
    if (runner) {
      if (auto next = window.refill()) {
        // The freed slot stays here: the window's next conversation starts in it now, intended
        // at this end. The end can wait for the batch (the slot is not the controller's to
        // give) until half the window is used, so the controller tops it up before it runs dry.
        proto::ConversationEnd refilled = e;
        refilled.refilled_by = static_cast<int64_t>(next->index);
        batcher.add_end(refilled, /*send_now=*/window.half_used());
        // Users mode: the user's next conversation starts its gap after this end.
        const bool user = next->phase == proto::Phase::kMeasure;
        next->start_ns = steady_now_ns() + (user ? settings_user_gap_ns : 0);
        runner->assign(std::move(*next));
        return;
      }
    }
    // An end frees a concurrency slot at the controller: send it with whatever else this loop
    // iteration produced, not up to flush_interval_s later (that delay idled the slot).
    batcher.add_end(e, /*send_now=*/true);
    if (shutting_down) maybe_finish();
  }

  // --- shutdown ---

  // Cancel everything, wait (bounded) for the cancelled transfers' records, flush, say bye.
  // Event-driven: each conversation's end calls maybe_finish() (the last transfer's callback
  // ends the last conversation), so does each retry of batches the PUSH socket refused; one
  // deadline per phase bounds the wait (drain: shutdown_drain_s; send: the results linger).
  void begin_shutdown() {
    if (shutting_down) return;
    shutting_down = true;
    control.stop_watching();
    close_window();
    arm_shutdown_deadline(seconds_to_ns(options.shutdown_drain_s));
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
    if (!batcher.finished()) {
      const bool idle = !runner || (runner->active_conversations() == 0 && http->in_flight() == 0);
      if (!idle && !shutdown_deadline_passed) return;  // the next end or the deadline comes back
      // Bye travels on the results socket, after every batch, so nothing is counted missing.
      if (control.welcomed()) {
        proto::Bye bye{options.id, control.token(), exit_code == 0 ? "done" : "stopped", 0};
        if (runner) bye.legacy_open_sessions = static_cast<int64_t>(runner->legacy_open_sessions());
        batcher.finish(&bye);
      } else {
        batcher.finish(nullptr);
      }
      if (batcher.unsent() != 0) {
        // The PUSH queue is full: the retry timer keeps offering the rest until this deadline.
        arm_shutdown_deadline(results_linger_ms() * kNsPerMs);
        return;
      }
    }
    if (batcher.unsent() != 0 && !shutdown_deadline_passed) return;
    if (batcher.unsent() != 0) {
      log_warn(batcher.unsent(), " result message(s) not taken by the results socket in time");
    }
    if (shutdown_timer) loop.cancel_timer(shutdown_timer);
    shutdown_timer = 0;
    loop.stop();
  }

  int run() {
    control.start();
    signal_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    g_signal_fd = signal_fd;
    loop.add_fd(signal_fd, EPOLLIN, [this](uint32_t) {
      uint64_t v;
      [[maybe_unused]] auto n = ::read(signal_fd, &v, sizeof v);
      // Over ipc:// the controller that started this worker got the same Ctrl-C and says so;
      // a line from here would land in the middle of its live view.
      if (options.connect.rfind("ipc://", 0) == 0) {
        log_debug("signal received: cancelling and exiting");
      } else {
        log_info("signal received: cancelling and exiting");
      }
      if (exit_code == 0) exit_code = 130;
      begin_shutdown();
    });
    loop.run();
    runner.reset();
    http.reset();
    // Nothing that matters is left on the control socket; the results socket may still be
    // flushing the Bye, briefly when nobody is there to take it.
    control.close();
    results.set(zmq::sockopt::linger, results_linger_ms());
    return exit_code;
  }
};

Worker::Worker(WorkerOptions options, WorkerSeams seams)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(seams), hostname())) {}
Worker::~Worker() = default;

int Worker::run() { return impl_->run(); }

void Worker::request_stop_from_signal() {
  int fd = g_signal_fd.load();
  if (fd < 0) return;
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
}

}  // namespace convoy::worker
