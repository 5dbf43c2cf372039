#include "controller/run/worker_plane.hpp"

#include <algorithm>
#include <cstdio>

#include "common/log.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/run/assigner.hpp"
#include "proto/envelope.hpp"

namespace convoy::controller {

proto::WorkerSettings worker_settings(const Config& c, const std::string& url) {
  proto::WorkerSettings s;
  static_cast<proto::TargetSettings&>(s) = c.target;  // every target.* key, as configured
  s.url = url;                                        // "mock" resolved to the mock's address
  s.session_routing = c.session_routing;
  s.cancel_fraction = c.load.cancel.fraction;
  s.cancel_after_ms = c.load.cancel.after_ms;
  s.history = c.dataset.history;
  s.seed = c.seed;
  if (c.dataset.tokenizer && !c.dataset.tokenizer_is_server()) s.tokenizer = *c.dataset.tokenizer;
  if (c.load.mode == LoadMode::kUsers) s.user_gap_ns = user_gap_ns(c.load);
  return s;
}

WorkerPlane::WorkerPlane(zmq::context_t* context, const Liveness& liveness,
                         std::function<int64_t()> clock, const Config& config, RunFacts& facts)
    : clock_(std::move(clock)),
      config_(config),
      facts_(facts),
      context_(context ? context : &own_context_.emplace(1)),
      registry_(liveness) {}

void WorkerPlane::open(bool own_workers_only) {
  own_workers_only_ = own_workers_only;
  opened_ns_ = clock_();
  sockets_.emplace(*context_, config_, own_workers_only);
}

void WorkerPlane::announce_ready(int64_t t) {
  const size_t ready = registry_.count(WorkerState::kReady);
  if (announced_ready_ || static_cast<int>(ready) < config_.expected_workers()) return;
  announced_ready_ = true;
  char took[32];
  std::snprintf(took, sizeof took, "%.1f s", static_cast<double>(t - opened_ns_) / 1e9);
  log_info(ready, " worker(s) ready (", sockets_->control_endpoint(), ", ", took, ")");
}

void WorkerPlane::set_welcome(std::string run_id, proto::WorkerSettings settings) {
  run_id_ = std::move(run_id);
  settings_ = std::move(settings);
}

std::optional<std::string> WorkerPlane::on_control(const std::string& worker_id,
                                                   zmq::message_t& payload, bool ending,
                                                   int64_t t) {
  std::string error;
  auto d = proto::decode(payload.data(), payload.size(), &error);
  if (!d) {
    log_warn("dropped a malformed message from ", log_escape(worker_id), ": ", log_escape(error));
    return std::nullopt;
  }
  switch (d->type) {
    case proto::MsgType::kHello:
      if (auto hello = d->as<proto::Hello>()) on_hello(worker_id, *hello, d->version, ending, t);
      break;
    case proto::MsgType::kPong:
      if (auto pong = d->as<proto::Pong>()) return on_pong(worker_id, *pong, ending, t);
      break;
    case proto::MsgType::kHeartbeat:
      if (auto hb = d->as<proto::Heartbeat>()) registry_.on_heartbeat(worker_id, *hb, t);
      break;
    default:
      registry_.on_seen(worker_id, t);
      log_warn("dropped an unexpected ", proto::to_string(d->type), " from ",
               log_escape(worker_id));
  }
  return std::nullopt;
}

void WorkerPlane::refuse(const std::string& worker_id, const Refusal& why) {
  // A flood of hellos is logged in moderation; every refusal is counted in summary.json.
  if (++facts_.rejected_workers <= 10 || facts_.rejected_workers % 100 == 0) {
    log_warn("refused worker ", log_escape(worker_id), " (", facts_.rejected_workers,
             " refused so far): ", log_escape(why.reason, 512));
  }
  send(worker_id, proto::Reject{why.reason, why.retry ? config_.workers.ready_timeout_s : 0});
}

// A worker is sent pings at its hello and its Welcome (with its results token) only once its
// clock check is done and a slot is free (on_pong): a peer that only says hello holds nothing.
void WorkerPlane::on_hello(const std::string& worker_id, proto::Hello& hello, uint32_t version,
                           bool ending, int64_t t) {
  if (hello.worker_id != worker_id) hello.worker_id = worker_id;
  if (version != proto::kProtocolVersion) hello.protocol_version = version;
  const WorkerInfo* known = registry_.find(worker_id);
  const bool registered =
      known && known->state != WorkerState::kLost && known->state != WorkerState::kDone;
  if (!registered && ending) return refuse(worker_id, Refusal{"the run is ending"});
  // Never more workers than workers.expect at once: late joiners only replace lost ones.
  const auto max_live = static_cast<size_t>(config_.expected_workers());
  if (auto err = registry_.on_hello(hello, t, max_live)) return refuse(worker_id, *err);
  WorkerInfo* w = registry_.find(worker_id);
  // A repeat before any pong is answered with a ping again (the first may never have arrived).
  if (!w || w->state != WorkerState::kConnecting || !w->samples.empty()) return;
  send(worker_id, ping());
}

std::optional<std::string> WorkerPlane::on_pong(const std::string& worker_id,
                                                const proto::Pong& pong, bool ending, int64_t t) {
  WorkerInfo* w = registry_.find(worker_id);
  if (!w) return std::nullopt;
  const auto max_live = ending ? size_t{0} : static_cast<size_t>(config_.expected_workers());
  const bool became_ready = registry_.on_pong(worker_id, pong, t, max_live);
  if (w->state == WorkerState::kConnecting && !w->handshake_done()) {
    send(worker_id, ping());
  }
  if (w->state == WorkerState::kConnecting && w->handshake_done()) {
    // Its clock check is done but every slot was taken meanwhile: it may try again.
    registry_.forget(worker_id);
    if (ending) {
      refuse(worker_id, Refusal{"the run is ending"});
      return std::nullopt;
    }
    refuse(worker_id,
           Refusal{"worker " + worker_id + " refused for now: the run already has " +
                       std::to_string(max_live) + " worker(s), as many as workers.expect",
                   true});
    return std::nullopt;
  }
  if (!became_ready) return std::nullopt;
  w->token = random_token();
  proto::Welcome welcome{run_id_, sockets_->results_endpoint(), settings_, w->token};
  if (const auto& k = config_.load.prefill_concurrency) {
    welcome.settings.prefill_concurrency = prefill_share(*k, config_.expected_workers(), welcomed_);
  }
  ++welcomed_;
  send(worker_id, welcome);
  // `convoy run`'s own workers are announced together, once (announce_ready); a remote worker
  // joining is news to whoever started it.
  const LogLevel level = own_workers_only_ ? LogLevel::kDebug : LogLevel::kInfo;
  if (log_level() <= level) {
    log_line(level, detail::concat("worker ", log_escape(worker_id), " (", log_escape(w->host),
                                   " pid ", w->pid, ") joined; clock offset ", w->offset_ns(),
                                   " ns (rtt ", w->best->rtt_ns, " ns)"));
  }
  announce_ready(t);
  return worker_id;
}

WorkerInfo* WorkerPlane::authentic(const std::string& worker_id, const std::string& token,
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

std::vector<std::string> WorkerPlane::tick(int64_t t) {
  for (const auto& [id, w] : registry_.workers()) {
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone) continue;
    proto::Heartbeat hb;
    hb.sent_ns = t;
    send(id, hb);
  }
  // Each live worker's clock offset is measured again on its own deadline.
  for (const auto& id : registry_.due_clock_checks(t)) send(id, ping());
  return registry_.expire(t);
}

void WorkerPlane::broadcast(const proto::Stop& stop) {
  for (const auto& [id, w] : registry_.workers()) {
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone) continue;
    send(id, stop);
  }
}

bool WorkerPlane::all_gone() const {
  const auto& all = registry_.workers();
  return std::all_of(all.begin(), all.end(), [](const auto& kv) {
    return kv.second.state == WorkerState::kLost || kv.second.state == WorkerState::kDone;
  });
}

}  // namespace convoy::controller
