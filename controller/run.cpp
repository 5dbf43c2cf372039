#include "controller/run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <unordered_map>
#include <zmq.hpp>

#include "common/curve.hpp"
#include "common/log.hpp"
#include "common/zmq_util.hpp"
#include "controller/dataset.hpp"
#include "controller/ids.hpp"
#include "controller/metrics.hpp"
#include "controller/process.hpp"
#include "controller/progress.hpp"
#include "controller/records_writer.hpp"
#include "controller/registry.hpp"
#include "controller/run_report.hpp"
#include "controller/schedule.hpp"
#include "controller/sharding.hpp"
#include "controller/target.hpp"
#include "proto/envelope.hpp"

namespace convoy::controller {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerSec = 1'000'000'000;
constexpr int64_t kLookaheadNs = 100 * kNsPerMs;    // conversations go out this far ahead
constexpr int64_t kRecheckClockNs = 5 * kNsPerSec;  // offset re-check during the run
constexpr int64_t kByeWaitNs = 10 * kNsPerSec;      // after the final stop

// The only global mutable state: signals received.
std::atomic<int> g_signals{0};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string timestamp_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

proto::WorkerSettings worker_settings(const Config& c, const std::string& url) {
  proto::WorkerSettings s;
  s.url = url;
  s.endpoint = to_string(c.target.endpoint);
  s.model = c.target.model;
  s.streaming = c.target.streaming;
  s.api_key_env = c.target.api_key_env;
  for (const auto& [k, v] : c.target.headers) s.headers.emplace_back(k, v);
  s.extra_body_json = c.target.extra_body_json;
  s.request_timeout_s = c.target.request_timeout_s;
  s.connect_timeout_s = c.target.connect_timeout_s;
  s.use_server_token_counts = c.target.use_server_token_counts;
  s.max_completion_tokens = c.target.max_completion_tokens;
  s.http2 = c.target.http2;
  s.insecure = c.target.insecure;
  s.session_routing_mode = to_string(c.session_routing.mode);
  s.session_timeout_s = c.session_routing.timeout_s;
  s.session_header_name = c.session_routing.header_name;
  s.cancel_fraction = c.load.cancel.fraction;
  s.cancel_after_ms = c.load.cancel.after_ms;
  s.history = to_string(c.dataset.history);
  s.seed = c.seed;
  return s;
}

enum class RunPhase { kStarting, kWarmup, kMeasure, kDrain, kStopping, kDone };

class Run {
 public:
  explicit Run(const RunOptions& options) : options_(options), config_(options.config) {}

  int execute();

 private:
  // setup
  void prepare_output_dir();
  void start_mock();
  void bind_sockets();
  void start_local_workers();

  // loop
  void loop();
  void poll_once(int64_t timeout_ns);
  void on_control(const std::string& worker_id, zmq::message_t& payload);
  void on_result(zmq::message_t& payload);
  void on_records(const std::string& worker_id, std::vector<proto::Record>& records);
  void on_end(const std::string& worker_id, const proto::ConversationEnd& end);
  void tick(int64_t now);
  void schedule(int64_t now);
  void begin_measure(int64_t now);
  void begin_drain(int64_t now, const std::string& why);
  void begin_stopping(int64_t now);
  void on_worker_lost(const std::string& worker_id, int64_t now);
  void assign(uint64_t seq, int64_t intended_ns, proto::Phase phase);
  void flush_assignments();
  proto::Conversation conversation_for(uint64_t seq) const;

  template <class T>
  void send_to(const std::string& worker_id, const T& msg);
  void broadcast_stop(bool cancel);

  int finish();

  const RunOptions& options_;
  Config config_;
  std::string url_;
  std::string run_id_;
  std::filesystem::path out_dir_;

  std::optional<ChildProcess> mock_;
  std::vector<ChildProcess> workers_;
  zmq::context_t ctx_{1};
  std::optional<ZapAuthenticator> zap_;  // before the sockets: destroyed after them
  zmq::socket_t router_{ctx_, zmq::socket_type::router};
  zmq::socket_t pull_{ctx_, zmq::socket_type::pull};
  std::string control_endpoint_;
  std::string results_endpoint_;

  WorkerRegistry registry_;
  Sharder sharder_;
  std::vector<proto::Conversation> dataset_;
  std::optional<MetricsAggregator> metrics_;
  std::optional<RecordsWriter> records_;
  RunFacts facts_;

  RunPhase phase_ = RunPhase::kStarting;
  std::optional<Scheduler> scheduler_;
  uint64_t seq_base_ = 0;  // first seq of the current scheduler
  struct Outstanding {
    std::string worker;
    int64_t intended_ns = 0;
    proto::Phase phase = proto::Phase::kMeasure;
    bool started = false;  // a record arrived for it
  };
  std::unordered_map<uint64_t, Outstanding> outstanding_;  // by conversation index (= seq)
  std::map<std::string, proto::Assign> pending_assign_;
  int64_t measure_requests_ = 0;
  int64_t ready_deadline_ns_ = 0;
  int64_t measure_start_ns_ = 0;
  int64_t drain_deadline_ns_ = 0;
  int64_t stop_deadline_ns_ = 0;
  int64_t next_tick_ns_ = 0;
  int handled_signals_ = 0;
  bool interrupted_ = false;
  bool incomplete_ = false;
  std::string incomplete_reason_;
  uint64_t ping_seq_ = 0;
  Progress progress_;
};

template <class T>
void Run::send_to(const std::string& worker_id, const T& msg) {
  std::string bytes = proto::encode(msg);
  // ROUTER drops messages to unknown or full peers instead of blocking: liveness covers it.
  (void)router_.send(zmq::buffer(worker_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  (void)router_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
}

void Run::prepare_output_dir() {
  std::string dir = options_.output_dir.value_or(config_.output.dir);
  dir = replace_all(dir, "{name}", config_.name);
  dir = replace_all(dir, "{timestamp}", timestamp_text());
  out_dir_ = dir;
  std::error_code ec;
  std::filesystem::create_directories(out_dir_, ec);
  if (ec) throw ConfigError("output.dir: cannot create " + dir + ": " + ec.message());
}

void Run::start_mock() {
  std::vector<std::string> argv = {find_executable("convoy-mock"),
                                   "--host",
                                   "127.0.0.1",
                                   "--port",
                                   "0",
                                   "--workers",
                                   std::to_string(config_.mock.workers),
                                   "--contract",
                                   config_.mock.contract,
                                   "--router-mode",
                                   config_.mock.router_mode,
                                   "--itl-ms",
                                   std::to_string(config_.mock.itl_ms),
                                   "--speedup",
                                   std::to_string(config_.mock.speedup),
                                   "--engine-sessions",
                                   config_.mock.engine_sessions ? "true" : "false",
                                   "--model",
                                   config_.target.model};
  for (const auto& a : config_.mock.extra_args) argv.push_back(a);
  mock_ = ChildProcess::spawn(argv, /*capture_stdout=*/true);
  const std::string prefix = "convoy-mock listening on ";
  for (int i = 0; i < 50; ++i) {
    auto line = mock_->read_line(10000);
    if (!line) break;
    if (line->rfind(prefix, 0) == 0) {
      url_ = line->substr(prefix.size());
      log_info("started convoy-mock at ", url_);
      return;
    }
  }
  throw std::runtime_error("convoy-mock did not report its address (is it built?)");
}

void Run::bind_sockets() {
  configure_socket(router_);
  configure_socket(pull_);
  const std::string& listen = config_.workers.listen;
  if (config_.workers.curve_keys) {
    // Only workers holding an authorized key get in; the ZAP handler logs the others.
    const std::filesystem::path dir = *config_.workers.curve_keys;
    CurveKeyPair server = read_curve_key_file((dir / "controller.key").string());
    zap_.emplace(ctx_, read_authorized_keys((dir / "authorized_workers").string()));
    make_curve_server(router_, server);
    make_curve_server(pull_, server);
  } else if (listen.rfind("tcp://", 0) == 0 && listen.rfind("tcp://127.", 0) != 0 &&
             listen.rfind("tcp://localhost:", 0) != 0 && listen.rfind("tcp://[::1]", 0) != 0) {
    log_warn("workers.listen ", listen,
             " is not a loopback address and workers.curve_keys is not set: any host that "
             "reaches it can join the run (see `convoy keygen`)");
  }
  router_.set(zmq::sockopt::router_mandatory, 0);
  router_.bind(config_.workers.listen);
  control_endpoint_ = last_endpoint(router_);
  // Results listen where configured, else on the same interface on a port of their own.
  std::string base = control_endpoint_;
  if (config_.workers.results_listen) {
    pull_.bind(*config_.workers.results_listen);
  } else if (base.rfind("tcp://", 0) == 0) {
    size_t colon = base.rfind(':');
    pull_.bind(base.substr(0, colon) + ":0");
  } else {
    pull_.bind(base + ".results");
  }
  results_endpoint_ = last_endpoint(pull_);
  log_info("controller listening on ", control_endpoint_, " (results ", results_endpoint_, ")");
}

void Run::start_local_workers() {
  if (options_.controller_only) return;
  std::string exe = find_executable("convoy-worker");
  // With CURVE, local workers use the key pairs from `convoy keygen` in turn.
  std::vector<std::string> worker_keys;
  if (config_.workers.curve_keys) {
    const std::filesystem::path dir = *config_.workers.curve_keys;
    for (int i = 0; std::filesystem::exists(dir / ("worker-" + std::to_string(i) + ".key")); ++i) {
      worker_keys.push_back((dir / ("worker-" + std::to_string(i) + ".key")).string());
    }
    if (worker_keys.empty()) {
      throw ConfigError("workers.curve_keys: no worker-N.key files in " + dir.string());
    }
  }
  for (int i = 0; i < config_.workers.local; ++i) {
    std::vector<std::string> argv = {
        exe,        "--connect", control_endpoint_, "--id", "local-" + std::to_string(i),
        "--wait-s", "30"};
    if (!worker_keys.empty()) {
      argv.push_back("--curve-server-key");
      argv.push_back(
          (std::filesystem::path(*config_.workers.curve_keys) / "controller.pub").string());
      argv.push_back("--curve-key");
      argv.push_back(worker_keys[static_cast<size_t>(i) % worker_keys.size()]);
    }
    workers_.push_back(ChildProcess::spawn(argv, /*capture_stdout=*/false));
  }
}

proto::Conversation Run::conversation_for(uint64_t seq) const {
  const proto::Conversation& base = dataset_[seq % dataset_.size()];
  proto::Conversation c = base;
  if (seq >= dataset_.size()) {
    // The dataset cycles: a new conversation with its own identity and the same content.
    c.index = seq;
    c.correlation_id = correlation_id(config_.seed, seq);
    c.conversation_id = base.conversation_id + "#" + std::to_string(seq / dataset_.size());
  }
  return c;
}

void Run::assign(uint64_t seq, int64_t intended_ns, proto::Phase phase) {
  proto::Conversation c = conversation_for(seq);
  c.phase = phase;
  const std::string& worker = sharder_.pick(c.correlation_id);
  if (worker.empty()) return;  // all workers lost; finish() reports it
  WorkerInfo* w = registry_.find(worker);
  c.start_ns = intended_ns + (w ? w->offset_ns() : 0);
  if (w) {
    ++w->conversations_assigned;
    if (w->state == WorkerState::kReady) w->state = WorkerState::kRunning;
  }
  outstanding_[c.index] = Outstanding{worker, intended_ns, phase, false};
  pending_assign_[worker].conversations.push_back(std::move(c));
}

void Run::flush_assignments() {
  for (auto& [worker, msg] : pending_assign_) {
    if (!msg.conversations.empty()) send_to(worker, msg);
  }
  pending_assign_.clear();
}

void Run::broadcast_stop(bool cancel) {
  for (const auto& [id, w] : registry_.workers()) {
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone) continue;
    send_to(id, proto::Stop{cancel});
  }
}

void Run::on_control(const std::string& worker_id, zmq::message_t& payload) {
  int64_t now = now_ns();
  std::string error;
  auto d = proto::decode(payload.data(), payload.size(), &error);
  if (!d) {
    log_warn("dropped a malformed message from ", worker_id, ": ", error);
    return;
  }
  switch (d->type) {
    case proto::MsgType::kHello: {
      auto hello = d->as<proto::Hello>();
      if (!hello) break;
      if (hello->worker_id != worker_id) hello->worker_id = worker_id;
      if (d->version != proto::kProtocolVersion) hello->protocol_version = d->version;
      if (auto err = registry_.on_hello(*hello, now)) {
        log_error(*err);
        send_to(worker_id, proto::Reject{*err});
        break;
      }
      WorkerInfo* w = registry_.find(worker_id);
      if (w && w->state == WorkerState::kConnecting && w->samples.empty()) {
        if (phase_ >= RunPhase::kDrain) {
          send_to(worker_id, proto::Reject{"the run is ending"});
          break;
        }
        proto::Welcome welcome{run_id_, results_endpoint_, worker_settings(config_, url_)};
        send_to(worker_id, welcome);
        send_to(worker_id, proto::Ping{++ping_seq_, now_ns()});
        log_info("worker ", worker_id, " (", hello->host, " pid ", hello->pid, ") joined");
      }
      break;
    }
    case proto::MsgType::kPong: {
      auto pong = d->as<proto::Pong>();
      if (!pong) break;
      WorkerInfo* w = registry_.find(worker_id);
      if (!w) break;
      bool became_ready = registry_.on_pong(worker_id, *pong, now);
      if (w->state == WorkerState::kConnecting && w->samples.size() < kClockPings) {
        send_to(worker_id, proto::Ping{++ping_seq_, now_ns()});
      }
      if (became_ready) {
        log_debug("worker ", worker_id, " ready; clock offset ", w->offset_ns(), " ns (rtt ",
                  w->best->rtt_ns, " ns)");
        if (phase_ == RunPhase::kWarmup || phase_ == RunPhase::kMeasure) {
          sharder_.add_worker(worker_id);  // a late joiner takes new conversations
        }
      }
      break;
    }
    case proto::MsgType::kHeartbeat:
      if (auto hb = d->as<proto::Heartbeat>()) registry_.on_heartbeat(worker_id, *hb, now);
      break;
    default:
      registry_.on_seen(worker_id, now);
      log_warn("dropped an unexpected ", proto::to_string(d->type), " from ", worker_id);
  }
}

void Run::on_result(zmq::message_t& payload) {
  std::string error;
  auto d = proto::decode(payload.data(), payload.size(), &error);
  if (!d) {
    log_warn("dropped a malformed result batch: ", error);
    return;
  }
  if (d->type == proto::MsgType::kBye) {
    // The worker's results socket carries its bye after every batch: all its records are in.
    if (auto bye = d->as<proto::Bye>()) {
      if (WorkerInfo* w = registry_.find(bye->worker_id)) {
        w->state = WorkerState::kDone;
        w->last_heartbeat.legacy_open_sessions = bye->legacy_open_sessions;
      }
      sharder_.remove_worker(bye->worker_id);
    }
    return;
  }
  if (d->type != proto::MsgType::kResults) {
    log_warn("dropped an unexpected ", proto::to_string(d->type), " on the results socket");
    return;
  }
  auto results = d->as<proto::Results>();
  if (!results) {
    log_warn("dropped a result batch of the wrong shape");
    return;
  }
  registry_.on_seen(results->worker_id, now_ns());
  on_records(results->worker_id, results->records);
  for (const auto& e : results->ended) on_end(results->worker_id, e);
}

void Run::on_records(const std::string& worker_id, std::vector<proto::Record>& records) {
  WorkerInfo* w = registry_.find(worker_id);
  const int64_t offset = w ? w->offset_ns() : 0;
  const std::string& host = w ? w->host : worker_id;
  for (auto& r : records) {
    // Onto the controller's clock: every timestamp, so records of all workers share one axis.
    for (int64_t* t : {&r.intended_ns, &r.sent_ns, &r.first_byte_ns, &r.first_token_ns,
                       &r.second_token_ns, &r.last_token_ns, &r.end_ns}) {
      if (*t != 0) *t -= offset;
    }
    if (w) ++w->records;
    if (auto it = outstanding_.find(r.conversation_index); it != outstanding_.end()) {
      it->second.started = true;
    }
    if (r.phase == proto::Phase::kMeasure) ++measure_requests_;
    metrics_->add(r);
    facts_.add(r);
    if (records_) records_->write(r, worker_id, host);
    progress_.on_record(r);
  }
}

void Run::on_end(const std::string& worker_id, const proto::ConversationEnd& end) {
  auto it = outstanding_.find(end.conversation_index);
  if (it == outstanding_.end() || it->second.worker != worker_id) return;  // re-homed or lost
  const bool current = end.conversation_index >= seq_base_;
  outstanding_.erase(it);
  progress_.on_conversation_end(end.reason);
  if (scheduler_ && current) scheduler_->on_end(now_ns());
}

void Run::on_worker_lost(const std::string& worker_id, int64_t now) {
  sharder_.remove_worker(worker_id);
  std::vector<uint64_t> rehome;
  std::vector<std::string> lost;
  for (auto& [index, o] : outstanding_) {
    if (o.worker != worker_id) continue;
    // Re-home only what never started, and only while a survivor can take it.
    if (!o.started && o.intended_ns > now && phase_ < RunPhase::kDrain && !sharder_.empty()) {
      rehome.push_back(index);
    } else {
      lost.push_back(conversation_for(index).correlation_id);
    }
  }
  for (uint64_t index : rehome) {
    Outstanding o = outstanding_[index];
    outstanding_.erase(index);
    assign(index, o.intended_ns, o.phase);
  }
  for (const auto& id : lost) facts_.lost_conversations.push_back(id);
  std::erase_if(outstanding_, [&](const auto& kv) {
    if (kv.second.worker != worker_id) return false;
    if (scheduler_ && kv.first >= seq_base_) scheduler_->on_end(now);
    return true;
  });
  facts_.lost_workers.push_back(worker_id);
  log_error("worker ", worker_id, " lost (no heartbeat for ", kMissedHeartbeats,
            " s): ", lost.size(), " conversation(s) in flight lost, ", rehome.size(), " re-homed");
  flush_assignments();
  if (sharder_.empty() && phase_ != RunPhase::kStarting && phase_ != RunPhase::kDone) {
    incomplete_ = true;
    incomplete_reason_ = "all workers lost";
    log_error("all workers lost: ending the run with partial results");
    phase_ = RunPhase::kDone;
  }
}

void Run::tick(int64_t now) {
  if (now < next_tick_ns_) return;
  next_tick_ns_ = now + kHeartbeatPeriodNs;
  for (const auto& [id, w] : registry_.workers()) {
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone) continue;
    proto::Heartbeat hb;
    hb.sent_ns = now;
    send_to(id, hb);
    if (w.state != WorkerState::kConnecting && now - w.joined_ns > kRecheckClockNs &&
        (now / kNsPerSec) % (kRecheckClockNs / kNsPerSec) == 0) {
      send_to(id, proto::Ping{++ping_seq_, now_ns()});
    }
  }
  for (const auto& id : registry_.expire(now)) on_worker_lost(id, now);
  if (!options_.quiet) progress_.print(now, outstanding_.size());
  if (records_) records_->flush();
}

void Run::begin_measure(int64_t now) {
  phase_ = RunPhase::kMeasure;
  measure_start_ns_ = now;
  metrics_->set_origin_ns(now);
  const auto& load = config_.load;
  std::optional<uint64_t> total;
  if (load.sessions) {
    total = static_cast<uint64_t>(*load.sessions);
  } else if (!load.duration_s && !load.requests) {
    total = dataset_.size();
  }
  if (config_.load.mode == LoadMode::kTrace) {
    total = std::min<uint64_t>(total.value_or(dataset_.size()), dataset_.size());
  }
  seq_base_ = static_cast<uint64_t>(config_.load.warmup_sessions);
  const uint64_t base = seq_base_;
  auto trace_offset = [this, base](uint64_t seq) {
    return dataset_[(base + seq) % dataset_.size()].start_ns;
  };
  scheduler_.emplace(load, load.mode, config_.seed, total, now, trace_offset);
  facts_.measure_start_ns = now;
  progress_.begin(now, total, load.requests);
  log_info("measuring: ", to_string(load.mode), " mode, ", registry_.live_count(), " worker(s)");
}

void Run::schedule(int64_t now) {
  if (phase_ == RunPhase::kWarmup || phase_ == RunPhase::kMeasure) {
    if (scheduler_) {
      for (const Dispatch& d : scheduler_->due(now, kLookaheadNs)) {
        proto::Phase p =
            phase_ == RunPhase::kWarmup ? proto::Phase::kWarmup : proto::Phase::kMeasure;
        assign(seq_base_ + d.seq, d.intended_ns, p);
        if (p == proto::Phase::kMeasure) facts_.intended_starts_ns.add(d.intended_ns);
      }
      flush_assignments();
    }
    const auto& load = config_.load;
    if (phase_ == RunPhase::kWarmup && scheduler_->exhausted() && outstanding_.empty()) {
      begin_measure(now);
      schedule(now);  // the measured conversations start now, not at the next wake-up
      return;
    }
    if (phase_ == RunPhase::kMeasure) {
      if (load.duration_s &&
          now - measure_start_ns_ >= static_cast<int64_t>(*load.duration_s * 1e9)) {
        begin_drain(now, "duration reached");
      } else if (load.requests && measure_requests_ >= *load.requests) {
        begin_drain(now, "request count reached");
      } else if (scheduler_->exhausted() && outstanding_.empty()) {
        begin_stopping(now);
      }
    }
  }
  if (phase_ == RunPhase::kDrain) {
    if (outstanding_.empty() || now >= drain_deadline_ns_) begin_stopping(now);
  }
  if (phase_ == RunPhase::kStopping) {
    bool all_gone =
        std::all_of(registry_.workers().begin(), registry_.workers().end(), [](const auto& kv) {
          return kv.second.state == WorkerState::kLost || kv.second.state == WorkerState::kDone;
        });
    bool children_gone =
        std::none_of(workers_.begin(), workers_.end(), [](ChildProcess& c) { return c.running(); });
    // Remote workers (controller only) are done when their Bye arrives: it follows their last
    // batch and carries the final legacy open-session count.
    if ((outstanding_.empty() && (options_.controller_only ? all_gone : children_gone)) ||
        (all_gone && children_gone) || now >= stop_deadline_ns_) {
      phase_ = RunPhase::kDone;
    }
  }
}

void Run::begin_drain(int64_t now, const std::string& why) {
  if (phase_ >= RunPhase::kDrain) return;
  log_info(why, ": no new conversations; in-flight requests may finish within ",
           config_.load.grace_s, " s");
  phase_ = RunPhase::kDrain;
  if (scheduler_) scheduler_->stop();
  drain_deadline_ns_ = now + static_cast<int64_t>(config_.load.grace_s * 1e9);
  broadcast_stop(/*cancel=*/false);
}

void Run::begin_stopping(int64_t now) {
  if (phase_ >= RunPhase::kStopping) return;
  if (!outstanding_.empty()) {
    log_warn("grace period over: cancelling ", outstanding_.size(), " conversation(s)");
  }
  phase_ = RunPhase::kStopping;
  if (scheduler_) scheduler_->stop();
  stop_deadline_ns_ = now + kByeWaitNs;
  broadcast_stop(/*cancel=*/true);
}

void Run::poll_once(int64_t timeout_ns) {
  zmq::pollitem_t items[] = {{router_.handle(), 0, ZMQ_POLLIN, 0},
                             {pull_.handle(), 0, ZMQ_POLLIN, 0}};
  auto timeout = std::chrono::milliseconds(std::max<int64_t>(0, timeout_ns / kNsPerMs));
  try {
    zmq::poll(items, 2, timeout);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
  }
  // Results first: a conversation's end frees its slot before new ones are scheduled.
  for (int i = 0; i < 10000; ++i) {
    zmq::message_t msg;
    if (!pull_.recv(msg, zmq::recv_flags::dontwait)) break;
    on_result(msg);
  }
  for (int i = 0; i < 10000; ++i) {
    zmq::message_t identity;
    if (!router_.recv(identity, zmq::recv_flags::dontwait)) break;
    zmq::message_t payload;
    if (!identity.more() || !router_.recv(payload, zmq::recv_flags::dontwait)) continue;
    while (payload.more()) {  // a peer sending extra frames: drop them
      zmq::message_t extra;
      if (!router_.recv(extra, zmq::recv_flags::dontwait)) break;
    }
    on_control(identity.to_string(), payload);
  }
}

void Run::loop() {
  const int expect = config_.expected_workers();
  ready_deadline_ns_ = now_ns() + static_cast<int64_t>(config_.workers.ready_timeout_s * 1e9);
  log_info("waiting for ", expect, " worker(s) on ", control_endpoint_);
  while (phase_ != RunPhase::kDone) {
    int64_t now = now_ns();
    int64_t wake = now + 50 * kNsPerMs;
    if (scheduler_) {
      if (auto next = scheduler_->next_intended_ns()) {
        wake = std::min(wake, *next - kLookaheadNs);
      }
    }
    poll_once(std::max<int64_t>(0, wake - now));
    now = now_ns();

    int signals = g_signals.load();
    if (signals > handled_signals_) {
      handled_signals_ = signals;
      interrupted_ = true;
      if (phase_ == RunPhase::kStarting) {
        log_warn("interrupted before the run started");
        phase_ = RunPhase::kDone;
        break;
      }
      if (signals == 1) {
        begin_drain(now, "interrupted (Ctrl-C again to cancel now)");
      } else {
        begin_stopping(now);
      }
    }

    if (phase_ == RunPhase::kStarting) {
      if (static_cast<int>(registry_.count(WorkerState::kReady)) >= expect) {
        for (const auto& [id, w] : registry_.workers()) {
          if (w.state == WorkerState::kReady) sharder_.add_worker(id);
        }
        facts_.start_wall = std::chrono::system_clock::now();
        if (config_.load.warmup_sessions > 0) {
          phase_ = RunPhase::kWarmup;
          LoadConfig warm = config_.load;
          seq_base_ = 0;
          scheduler_.emplace(warm, LoadMode::kConcurrency, config_.seed,
                             static_cast<uint64_t>(config_.load.warmup_sessions), now);
          log_info("warmup: ", config_.load.warmup_sessions, " conversation(s)");
        } else {
          begin_measure(now);
        }
      } else if (now > ready_deadline_ns_) {
        incomplete_ = true;
        incomplete_reason_ = "only " + std::to_string(registry_.count(WorkerState::kReady)) +
                             " of " + std::to_string(expect) + " worker(s) ready after " +
                             std::to_string(config_.workers.ready_timeout_s) +
                             " s (workers.ready_timeout_s)";
        log_error(incomplete_reason_);
        break;
      }
      // A local worker that died at start will never register: fail fast.
      for (auto& child : workers_) {
        if (!child.running() && child.exit_status() && *child.exit_status() != 0) {
          incomplete_ = true;
          incomplete_reason_ = "a local worker exited with status " +
                               std::to_string(*child.exit_status()) + " before the run started";
          log_error(incomplete_reason_);
          phase_ = RunPhase::kDone;
          break;
        }
      }
    }
    tick(now);
    schedule(now);
  }
}

int Run::execute() {
  run_id_ = config_.name + "-" + timestamp_text();
  if (config_.target.url == "mock") {
    start_mock();
  } else {
    url_ = config_.target.url;
    auto parts = parse_http_url(url_);
    if (!parts) throw ConfigError("target.url: not an http(s) url: " + url_);
    std::string error;
    if (!tcp_reachable(parts->host, parts->port, 5000, &error)) {
      log_error("target unreachable at start: ", error,
                " (is the server up at target.url?). Nothing was sent.");
      return kExitIncomplete;
    }
  }
  dataset_ = load_dataset(config_);
  if (dataset_.empty()) throw ConfigError("dataset: no conversations");
  prepare_output_dir();
  metrics_.emplace(config_);
  if (config_.output.records) records_.emplace(out_dir_ / "records.jsonl");
  bind_sockets();
  start_local_workers();
  facts_.start_wall = std::chrono::system_clock::now();
  loop();
  return finish();
}

int Run::finish() {
  // Stop everything we started, in order: workers first (they may still flush), then the mock.
  for (auto& child : workers_) child.stop(3000);
  // Late batches that arrived while workers exited.
  poll_once(0);
  if (mock_) mock_->stop(3000);
  facts_.end_wall = std::chrono::system_clock::now();
  if (records_) records_->close();

  bool sent_traffic = metrics_ && (metrics_->request_count() + metrics_->error_request_count() +
                                       metrics_->warmup_request_count() >
                                   0);
  if (!sent_traffic && incomplete_) {
    log_error("the run could not start: ", incomplete_reason_);
    return kExitIncomplete;
  }
  for (const auto& id : facts_.lost_conversations) (void)id;
  if (!outstanding_.empty()) {
    for (const auto& [index, o] : outstanding_) {
      facts_.unfinished_conversations.push_back(conversation_for(index).correlation_id);
    }
  }
  ReportInputs in{config_, url_,         out_dir_,    registry_,         metrics_->snapshot(),
                  facts_,  interrupted_, incomplete_, incomplete_reason_};
  int code = write_run_report(in);
  if (interrupted_) return kExitInterrupted;
  if (incomplete_) return kExitIncomplete;
  return code;
}

}  // namespace

int run_benchmark(const RunOptions& options) {
  Run run(options);
  return run.execute();
}

void request_stop_from_signal() { g_signals.fetch_add(1); }

}  // namespace convoy::controller
