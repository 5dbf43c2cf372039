#include "controller/run/run.hpp"

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
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/run_report.hpp"
#include "controller/run/process.hpp"
#include "controller/run/progress.hpp"
#include "controller/run/registry.hpp"
#include "controller/run/schedule.hpp"
#include "controller/run/sharding.hpp"
#include "controller/run/target_probe.hpp"
#include "proto/envelope.hpp"

namespace convoy::controller {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerSec = 1'000'000'000;
constexpr int64_t kLookaheadNs = 100 * kNsPerMs;    // conversations go out this far ahead
constexpr int64_t kRecheckClockNs = 5 * kNsPerSec;  // offset re-check during the run
constexpr int64_t kByeWaitNs = 10 * kNsPerSec;      // after the final stop
// An Assign batch is split before it would outgrow half the wire's message limit.
constexpr uint64_t kAssignBatchBytes = proto::kMaxMessageBytes / 2;

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
  s.max_response_bytes = c.target.max_response_bytes;
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
  // Results and Bye: the named worker, when the message carries its token; else counted.
  WorkerInfo* authentic(const std::string& worker_id, const std::string& token, const char* what);
  // A conversation its worker could not run (its assignment did not decode): ended, counted.
  void on_failed(const std::string& worker_id, uint64_t index, const std::string& error);
  void on_undecodable(const std::string& worker_id, const proto::UndecodableAssign& u);
  void tick(int64_t now);
  void schedule(int64_t now);
  void begin_measure(int64_t now);
  void begin_drain(int64_t now, const std::string& why);
  void begin_stopping(int64_t now);
  void on_worker_lost(const std::string& worker_id, int64_t now);
  void assign(uint64_t seq, int64_t intended_ns, proto::Phase phase);
  void flush_assignments();
  void send_batch(const std::string& worker, proto::Assign& msg);
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
  std::optional<PrivateDir> ipc_dir_;  // convoy run's ipc:// endpoints; outlives the sockets
  zmq::context_t ctx_{1};
  std::optional<ZapAuthenticator> zap_;  // before the sockets: destroyed after them
  zmq::socket_t router_{ctx_, zmq::socket_type::router};
  zmq::socket_t pull_{ctx_, zmq::socket_type::pull};
  std::string control_endpoint_;
  std::string results_endpoint_;

  WorkerRegistry registry_;
  Sharder sharder_;
  std::unique_ptr<Dataset> dataset_;  // generated or read back per conversation, never held
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
    uint64_t batch = 0;    // the Assign batch it went out in (numbered per worker)
    uint32_t batch_pos = 0;
  };
  std::unordered_map<uint64_t, Outstanding> outstanding_;  // by conversation index (= seq)
  // load.requests: the turns each measured conversation committed, and how many it sent. Kept
  // apart from outstanding_ so a re-homed conversation keeps its grant; a lost one keeps it too
  // (it may have sent requests whose records never came back).
  struct Grant {
    int64_t granted = 0;
    int64_t sent = 0;
  };
  RequestBudget budget_;  // unlimited until the measure phase
  std::unordered_map<uint64_t, Grant> grants_;
  std::map<std::string, proto::Assign> pending_assign_;
  std::map<std::string, uint64_t> pending_bytes_;  // wire_bytes_bound of each pending batch
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
  if (const auto old = previous_run_files(out_dir_); !old.empty()) {
    std::string names;
    for (const auto& name : old) names += (names.empty() ? "" : ", ") + name;
    log_warn("output folder ", dir, " already holds a previous run's files (", names,
             "): this run overwrites those it writes; the others stay as they are");
  }
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
  std::string control_at = listen;
  if (!options_.controller_only && listen == WorkersConfig{}.listen &&
      !config_.workers.results_listen && config_.expected_workers() <= config_.workers.local) {
    // `convoy run` left at the default: its own workers only, over ipc:// in a folder only
    // this user can enter, instead of a loopback port any local user could connect to.
    ipc_dir_.emplace("convoy-");
    control_at = "ipc://" + ipc_dir_->path() + "/control";
  }
  bind_or_throw(router_, control_at, "workers.listen");
  control_endpoint_ = last_endpoint(router_);
  // Results listen where configured, else on the same interface on a port of their own.
  std::string base = control_endpoint_;
  if (config_.workers.results_listen) {
    bind_or_throw(pull_, *config_.workers.results_listen, "workers.results_listen");
  } else if (base.rfind("tcp://", 0) == 0) {
    size_t colon = base.rfind(':');
    bind_or_throw(pull_, base.substr(0, colon) + ":0", "the results socket");
  } else {
    bind_or_throw(pull_, base + ".results", "the results socket");
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
  const uint64_t size = dataset_->size();
  proto::Conversation c = dataset_->conversation(seq % size);
  if (seq >= size) {
    // The dataset cycles: a new conversation with its own identity and the same content.
    c.index = seq;
    c.correlation_id = correlation_id(config_.seed, seq);
    c.conversation_id += "#" + std::to_string(seq / size);
  }
  return c;
}

void Run::assign(uint64_t seq, int64_t intended_ns, proto::Phase phase) {
  proto::Conversation c;
  try {
    c = conversation_for(seq);
  } catch (const std::exception& e) {
    // A dataset file changed under the run (rewritten in place): what was measured is kept,
    // nothing more starts, and the run ends as incomplete with its outputs written.
    if (!incomplete_) {
      incomplete_ = true;
      incomplete_reason_ = std::string("cannot read the dataset during the run: ") + e.what();
      log_error(incomplete_reason_);
    }
    begin_stopping(now_ns());
    return;
  }
  c.phase = phase;
  const std::string& worker = sharder_.pick(c.correlation_id);
  if (worker.empty()) return;  // all workers lost; finish() reports it
  WorkerInfo* w = registry_.find(worker);
  c.start_ns = intended_ns + (w ? w->offset_ns() : 0);
  if (w) {
    ++w->conversations_assigned;
    if (w->state == WorkerState::kReady) w->state = WorkerState::kRunning;
  }
  if (phase == proto::Phase::kMeasure && budget_.limited()) {
    // A re-homed conversation keeps the grant it had; a new one commits its planned turns.
    const int64_t planned =
        c.turns.size() > c.first_turn ? static_cast<int64_t>(c.turns.size() - c.first_turn) : 0;
    auto [grant, fresh] = grants_.try_emplace(c.index);
    if (fresh) grant->second.granted = budget_.commit(planned);
    // Cut to fit: the last kept turn is the final one (final_turn, session_control close).
    if (grant->second.granted < planned) {
      c.turns.resize(c.first_turn + static_cast<size_t>(grant->second.granted));
    }
  }
  // Each conversation fits one wire message (the dataset checks it at load), but a batch of heavy
  // ones may not: such a batch goes out in several Assigns.
  const uint64_t bytes = wire_bytes_bound(c);
  proto::Assign& batch = pending_assign_[worker];
  if (pending_bytes_[worker] + bytes > kAssignBatchBytes) send_batch(worker, batch);
  pending_bytes_[worker] += bytes;
  outstanding_[c.index] = Outstanding{worker, intended_ns, phase, false};
  batch.conversations.push_back(std::move(c));
}

void Run::send_batch(const std::string& worker, proto::Assign& msg) {
  if (msg.conversations.empty()) return;
  // Numbered per worker, positions remembered: a worker that cannot decode part of a batch
  // names it by number and position (Run::on_undecodable).
  if (WorkerInfo* w = registry_.find(worker)) msg.batch = ++w->batches_sent;
  for (size_t pos = 0; pos < msg.conversations.size(); ++pos) {
    auto it = outstanding_.find(msg.conversations[pos].index);
    if (it == outstanding_.end()) continue;
    it->second.batch = msg.batch;
    it->second.batch_pos = static_cast<uint32_t>(pos);
  }
  send_to(worker, msg);
  msg.conversations.clear();
  pending_bytes_[worker] = 0;
}

void Run::flush_assignments() {
  for (auto& [worker, msg] : pending_assign_) send_batch(worker, msg);
  pending_assign_.clear();
  pending_bytes_.clear();
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
    log_warn("dropped a malformed message from ", log_escape(worker_id), ": ", log_escape(error));
    return;
  }
  switch (d->type) {
    case proto::MsgType::kHello: {
      auto hello = d->as<proto::Hello>();
      if (!hello) break;
      if (hello->worker_id != worker_id) hello->worker_id = worker_id;
      if (d->version != proto::kProtocolVersion) hello->protocol_version = d->version;
      const WorkerInfo* known = registry_.find(worker_id);
      const bool registered =
          known && known->state != WorkerState::kLost && known->state != WorkerState::kDone;
      auto refuse = [&](const std::string& why) {
        // A flood of hellos is logged in moderation; every refusal is counted in summary.json.
        if (++facts_.rejected_workers <= 10 || facts_.rejected_workers % 100 == 0) {
          log_warn("refused worker ", log_escape(worker_id), " (", facts_.rejected_workers,
                   " refused so far): ", log_escape(why, 512));
        }
        send_to(worker_id, proto::Reject{why});
      };
      if (!registered && phase_ >= RunPhase::kDrain) {
        refuse("the run is ending");
        break;
      }
      // Never more workers than workers.expect at once: late joiners only replace lost ones.
      const auto max_active = static_cast<size_t>(config_.expected_workers());
      if (auto err = registry_.on_hello(*hello, now, max_active)) {
        refuse(*err);
        break;
      }
      WorkerInfo* w = registry_.find(worker_id);
      if (w && w->state == WorkerState::kConnecting && w->samples.empty()) {
        if (phase_ >= RunPhase::kDrain) {
          refuse("the run is ending");
          break;
        }
        if (w->token.empty()) w->token = random_token();
        proto::Welcome welcome{run_id_, results_endpoint_, worker_settings(config_, url_),
                               w->token};
        send_to(worker_id, welcome);
        send_to(worker_id, proto::Ping{++ping_seq_, now_ns()});
        log_info("worker ", log_escape(worker_id), " (", log_escape(hello->host), " pid ",
                 hello->pid, ") joined");
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
        log_debug("worker ", log_escape(worker_id), " ready; clock offset ", w->offset_ns(),
                  " ns (rtt ", w->best->rtt_ns, " ns)");
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
      log_warn("dropped an unexpected ", proto::to_string(d->type), " from ",
               log_escape(worker_id));
  }
}

void Run::on_result(zmq::message_t& payload) {
  std::string error;
  auto d = proto::decode(payload.data(), payload.size(), &error);
  if (!d) {
    log_warn("dropped a malformed result batch: ", log_escape(error));
    return;
  }
  if (d->type == proto::MsgType::kBye) {
    // The worker's results socket carries its bye after every batch: all its records are in.
    if (auto bye = d->as<proto::Bye>()) {
      WorkerInfo* w = authentic(bye->worker_id, bye->token, "bye");
      if (!w) return;
      // A worker declared lost stays lost: its conversations were already counted lost.
      if (w->state != WorkerState::kLost) w->state = WorkerState::kDone;
      w->last_heartbeat.legacy_open_sessions = bye->legacy_open_sessions;
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
  if (!authentic(results->worker_id, results->token, "results")) return;
  registry_.on_seen(results->worker_id, now_ns());
  on_records(results->worker_id, results->records);
  for (const auto& e : results->ended) on_end(results->worker_id, e);
  for (const auto& f : results->failed) {
    on_failed(results->worker_id, f.conversation_index, f.error);
  }
  for (const auto& u : results->undecodable) on_undecodable(results->worker_id, u);
}

WorkerInfo* Run::authentic(const std::string& worker_id, const std::string& token,
                           const char* what) {
  // The PULL socket takes pushes from anyone who reaches it: only the token issued in a
  // worker's Welcome (on its own control connection) proves a message is that worker's.
  WorkerInfo* w = registry_.find(worker_id);
  if (w && !w->token.empty() && tokens_equal(token, w->token)) return w;
  if (++facts_.forged_messages <= 10 || facts_.forged_messages % 1000 == 0) {
    log_warn("dropped a ", what, " message claiming to be worker ", log_escape(worker_id), " (",
             w ? "wrong token" : "no such worker", "; ", facts_.forged_messages,
             " dropped so far)");
  }
  return nullptr;
}

void Run::on_failed(const std::string& worker_id, uint64_t index, const std::string& error) {
  auto it = outstanding_.find(index);
  if (it == outstanding_.end() || it->second.worker != worker_id) return;
  const std::string id = correlation_id(config_.seed, index);  // = conversation_for(index)'s
  facts_.failed_conversations.push_back(id);
  if (facts_.failed_conversations.size() <= 20) {
    log_error("conversation ", id, " failed on worker ", log_escape(worker_id),
              " without being sent: ", log_escape(error, 512));
  }
  on_end(worker_id, proto::ConversationEnd{index, proto::EndReason::kAborted});
}

void Run::on_undecodable(const std::string& worker_id, const proto::UndecodableAssign& u) {
  std::vector<uint64_t> failed;
  for (const auto& [index, o] : outstanding_) {
    if (o.worker != worker_id || o.batch != u.batch) continue;
    const bool listed =
        std::find(u.positions.begin(), u.positions.end(), o.batch_pos) != u.positions.end();
    if (listed || (u.unreadable_from >= 0 && o.batch_pos >= u.unreadable_from)) {
      failed.push_back(index);
    }
  }
  log_error("worker ", log_escape(worker_id), " could not read ", failed.size(),
            " conversation(s) of assignment batch ", u.batch, ": ", log_escape(u.error, 512));
  for (uint64_t index : failed) on_failed(worker_id, index, u.error);
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
    if (r.phase == proto::Phase::kMeasure) {
      ++measure_requests_;
      if (auto g = grants_.find(r.conversation_index); g != grants_.end()) ++g->second.sent;
    }
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
  if (auto g = grants_.find(end.conversation_index); g != grants_.end()) {
    // Ended early (aborted, cancelled): the turns it did not send go back to load.requests.
    // Not when it sent nothing at all (a worker that could not take it): were every
    // conversation to fail that way, giving back would assign new ones forever.
    if (g->second.sent > 0) budget_.release(g->second.granted, g->second.sent);
    grants_.erase(g);
  }
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
      lost.push_back(correlation_id(config_.seed, index));  // = conversation_for(index)'s
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
    total = dataset_->size();
  }
  if (config_.load.mode == LoadMode::kTrace) {
    total = std::min<uint64_t>(total.value_or(dataset_->size()), dataset_->size());
  }
  seq_base_ = static_cast<uint64_t>(config_.load.warmup_sessions);
  const uint64_t base = seq_base_;
  auto trace_offset = [this, base](uint64_t seq) {
    return dataset_->start_ns((base + seq) % dataset_->size());
  };
  scheduler_.emplace(load, load.mode, config_.seed, total, now, trace_offset);
  budget_ = RequestBudget(load.requests);
  facts_.measure_start_ns = now;
  progress_.begin(now, total, load.requests);
  log_info("measuring: ", to_string(load.mode), " mode, ", registry_.live_count(), " worker(s)");
}

void Run::schedule(int64_t now) {
  if (phase_ == RunPhase::kWarmup || phase_ == RunPhase::kMeasure) {
    if (scheduler_) {
      const proto::Phase p =
          phase_ == RunPhase::kWarmup ? proto::Phase::kWarmup : proto::Phase::kMeasure;
      // With load.requests, one at a time: each commits its turns before the next is taken,
      // and none is taken once every request is committed.
      const bool budgeted = p == proto::Phase::kMeasure && budget_.limited();
      while (!budgeted || budget_.remaining() > 0) {
        const auto due = scheduler_->due(now, kLookaheadNs, budgeted ? 1 : SIZE_MAX);
        for (const Dispatch& d : due) {
          assign(seq_base_ + d.seq, d.intended_ns, p);
          if (p == proto::Phase::kMeasure) facts_.intended_starts_ns.add(d.intended_ns);
        }
        if (!budgeted || due.empty()) break;
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
      } else if (budget_.used() && outstanding_.empty()) {
        // Every request load.requests allowed was sent and has ended: nothing to drain.
        log_info("request count reached: ", measure_requests_, " measured request(s)");
        begin_stopping(now);
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
  // Validated before anything starts: a bad dataset starts no mock and sends nothing.
  dataset_ = open_dataset(config_);
  // Listen next: an endpoint that cannot be bound fails the run before anything is started.
  bind_sockets();
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
  prepare_output_dir();
  metrics_.emplace(config_);
  if (config_.output.records) records_.emplace(out_dir_ / "records.jsonl");
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
      facts_.unfinished_conversations.push_back(correlation_id(config_.seed, index));
    }
  }
  std::vector<OutputError> output_errors;
  if (records_) {
    if (auto e = records_->failure()) output_errors.push_back(std::move(*e));
  }
  ReportInputs in{
      config_, url_,         out_dir_,    worker_summaries(registry_), metrics_->snapshot(),
      facts_,  interrupted_, incomplete_, incomplete_reason_,          std::move(output_errors)};
  int code = write_run_report(in);
  // An output that could not be written outranks the rest: what the user would act on is
  // not all there.
  if (code == kExitIncomplete) return code;
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
