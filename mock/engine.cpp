#include "mock/engine.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "common/hash.hpp"
#include "mock/tokens.hpp"

namespace convoy::mock {

namespace {

double to_ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Dynamo's MAX_SESSION_AFFINITY_ID_BYTES, and how the real 1.6.1 frontend answers its affinity
// table's InvalidArgument errors (an id over the limit, an explicit worker or DP-rank pin that
// disagrees with the binding): 400 "Invalid request", the detail only in its log ("invalid request
// parameters"). A full table (65,536 bindings) is no error there: the request is routed without
// affinity and nothing binds (its log: "Affinity table full; routing without session affinity").
// Measured with tests/dynamo/conformance_test.cpp and docs/session-routing.md.
constexpr size_t kMaxSessionIdBytes = 256;
constexpr std::string_view kInvalidRequest = "Invalid request";

}  // namespace

Engine::Engine(const Options& options)
    : options_(options),
      router_(options.router_mode, options.seed),
      pins_(static_cast<size_t>(std::max(options.frontends, 1))),
      fault_rng_(options.seed),
      stats_(static_cast<size_t>(options.stats_sessions)) {
  workers_.reserve(static_cast<size_t>(options_.workers));
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back(options_.kv_blocks_per_worker);
}

Clock::duration Engine::scaled_ms(double model_ms) const {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(model_ms / options_.speedup));
}

Clock::duration Engine::session_ttl(const std::optional<double>& timeout_s) const {
  return scaled_ms(timeout_s.value_or(options_.default_session_timeout_s) * 1000.0);
}

void Engine::run(std::vector<std::function<void()>>& callbacks) {
  for (auto& callback : callbacks) {
    if (callback) callback();
  }
}

namespace {

// A request as the engine schedules it, before routing.
JobPtr make_job(const ApiRequest& request, const Options& options, Clock::time_point now) {
  auto job = std::make_shared<Job>();
  job->endpoint = request.endpoint;
  job->stream = request.stream;
  job->prompt_tokens = request.prompt_tokens;
  job->max_tokens = request.max_tokens;
  job->priority = request.priority;
  job->itl_ms = itl_ms_for(options, request.model);
  job->prompt_hashes = block_hashes(request.prompt, options.block_size);
  job->prompt_blocks = (request.prompt_tokens + options.block_size - 1) / options.block_size;
  job->kv_blocks =
      (request.prompt_tokens + request.max_tokens + options.block_size - 1) / options.block_size;
  job->arrived_at = now;
  return job;
}

// A worker's queue admits the highest agent_hints priority first, first come within one.
void enqueue_by_priority(std::deque<JobPtr>& queue, const JobPtr& job) {
  const auto behind = std::find_if(queue.begin(), queue.end(),
                                   [&](const JobPtr& q) { return q->priority < job->priority; });
  queue.insert(behind, job);
}

}  // namespace

std::variant<Submitted, ApiError> Engine::submit(ApiRequest&& request, const RequestMeta& meta,
                                                 std::function<void()> on_admit,
                                                 Clock::time_point now) {
  JobPtr job = make_job(request, options_, now);

  std::lock_guard lock(mutex_);
  if (shut_down_) return ApiError{503, "server is shutting down"};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (options_.error_rate > 0 && unit(fault_rng_) < options_.error_rate) {
    stats_.count_fault(FaultKind::kError);
    stats_.count_response(request.endpoint, 500);
    server_metrics_.on_end(-1, request.endpoint, request.stream, 0,
                           ServerMetrics::Outcome::kRejected, 500);
    return internal_error("injected fault: internal server error");
  }

  int worker = -1;
  std::optional<int> passed_over;
  auto session_error = options_.contract == Contract::kHeader
                           ? header_affinity(meta, worker, passed_over, now)
                           : apply_session(request, meta, worker, now);
  if (session_error) {
    stats_.count_response(request.endpoint, session_error->status);
    server_metrics_.on_end(-1, request.endpoint, request.stream, 0,
                           ServerMetrics::Outcome::kRejected, session_error->status);
    return *session_error;
  }
  if (worker < 0) worker = route(*job, meta);
  if (worker < 0) {
    stats_.count_response(request.endpoint, 503);
    server_metrics_.on_end(-1, request.endpoint, request.stream, 0,
                           ServerMetrics::Outcome::kRejected, 503);
    return ApiError{503, "no workers available for model " + options_.model};
  }
  if (passed_over && *passed_over != worker) stats_.count_affinity(AffinityEvent::kSoftMove);
  after_routing(request, meta, worker, now);
  job->worker = worker;
  job->frontend = meta.frontend;

  if (options_.contract == Contract::kHeader) {
    stats_.record_session_headers(!meta.parent_session_id.empty(), meta.session_final);
  }
  job->stats_key = !meta.correlation_id.empty()          ? meta.correlation_id
                   : !request.session.session_id.empty() ? request.session.session_id
                                                         : meta.session_header;
  job->turn_index =
      job->stats_key.empty()
          ? std::max<int64_t>(request.user_turns - 1, 0)
          : stats_.observe_session(job->stats_key, worker, meta.frontend, meta.parent_session_id,
                                   meta.session_final.value_or(false));
  if (request.stream) {
    auto draw = [&](double rate, FaultKind kind) {
      const bool hit = rate > 0 && unit(fault_rng_) < rate;
      if (hit) stats_.count_fault(kind);
      return hit;
    };
    job->faults.reset = draw(options_.reset_rate, FaultKind::kReset);
    job->faults.malformed = draw(options_.malformed_rate, FaultKind::kMalformed);
    job->faults.stall = options_.stall_ms > 0 && draw(options_.stall_rate, FaultKind::kStall);
  }
  stats_.count_response(request.endpoint, 200);
  job->prompt = std::move(request.prompt);

  Worker& w = workers_[static_cast<size_t>(worker)];
  ++w.requests;
  w.prefill_blocks += job->prompt_blocks;
  if (w.active < options_.max_num_seqs && w.queue.empty()) {
    admit(w, job, now);
    return Submitted{std::move(job), true};
  }
  job->on_admit = std::move(on_admit);
  enqueue_by_priority(w.queue, job);
  return Submitted{std::move(job), false};
}

int Engine::pick_frontend(std::string_view session_id) {
  if (options_.frontends <= 1) return 0;
  const auto n = static_cast<uint64_t>(options_.frontends);
  if (options_.ingress_hash == IngressHash::kSession && !session_id.empty()) {
    return static_cast<int>(splitmix64_finalize(fnv1a64(session_id)) % n);
  }
  std::lock_guard lock(mutex_);
  return static_cast<int>(frontend_cursor_++ % n);
}

bool Engine::eligible(int worker) const {
  const Worker& w = workers_[static_cast<size_t>(worker)];
  if (!w.up) return false;
  const auto has_slot = [this](const Worker& x) {
    return x.up && x.active < options_.max_num_seqs && x.queue.empty();
  };
  if (has_slot(w)) return true;
  return std::none_of(workers_.begin(), workers_.end(), has_slot);
}

std::optional<ApiError> Engine::header_affinity(const RequestMeta& meta, int& worker,
                                                std::optional<int>& passed_over,
                                                Clock::time_point now) {
  // Without --affinity-ttl-s Dynamo builds no affinity table (create_affinity_coordinator returns
  // None without a TTL, PR #10875): every turn is routed fresh and no id limit applies.
  if (!options_.affinity_ttl_s || meta.session_header.empty()) return std::nullopt;
  if (meta.session_header.size() > kMaxSessionIdBytes) {
    stats_.count_affinity(AffinityEvent::kIdTooLong);
    return bad_request(std::string(kInvalidRequest));
  }
  PinTable& table = pins_[static_cast<size_t>(meta.frontend)];
  const auto pin = table.find(meta.session_header, now);
  if (!pin) {
    // A new binding takes an entry; expired ones still hold theirs until the reaper runs.
    if (static_cast<int64_t>(table.size()) >= options_.affinity_max_entries) {
      stats_.count_affinity(AffinityEvent::kTableFull);  // after_routing binds nothing
      return std::nullopt;
    }
    stats_.count_affinity(AffinityEvent::kMiss);
    return std::nullopt;
  }
  // A bound session must agree with an explicit pin (affinity.rs validate_bound_target).
  const bool other_worker =
      meta.target_instance && *meta.target_instance != instance_id(options_, pin->worker);
  const bool other_rank = meta.target_rank && *meta.target_rank != static_cast<uint32_t>(dp_rank(
                                                                       options_, pin->worker));
  if (other_worker || other_rank) return bad_request(std::string(kInvalidRequest));
  if (options_.affinity_mode == AffinityMode::kSoft) {
    // PR #13907: a soft binding is the selector's preference, kept while the worker is eligible;
    // the session re-binds to wherever the request ran.
    if (eligible(pin->worker)) {
      worker = pin->worker;
      stats_.count_affinity(AffinityEvent::kHit);
    } else {
      passed_over = pin->worker;
    }
    return std::nullopt;
  }
  // Hard (the default): an exact target. A bound worker that is gone invalidates the binding
  // and the selection is retried once elsewhere (the request then binds there).
  if (workers_[static_cast<size_t>(pin->worker)].up) {
    worker = pin->worker;
    stats_.count_affinity(AffinityEvent::kHit);
  } else {
    table.unpin(meta.session_header);
    stats_.count_affinity(AffinityEvent::kInvalidated);
  }
  return std::nullopt;
}

std::optional<ApiError> Engine::apply_session(const ApiRequest& request, const RequestMeta& meta,
                                              int& worker, Clock::time_point now) {
  if (options_.contract == Contract::kNone) return std::nullopt;

  PinTable& pins = pins_[static_cast<size_t>(meta.frontend)];
  const auto& d = request.session;
  if (d.action == SessionAction::kNone || d.session_id.empty()) return std::nullopt;
  const auto pin = pins.find(d.session_id, now);
  if (!pin) return std::nullopt;
  const bool up = workers_[static_cast<size_t>(pin->worker)].up;
  if (pin->kind == PinKind::kEngine) {
    // The engine holds the session's state: losing its worker fails the session until the
    // client closes it or the TTL runs out.
    if (!up) {
      if (d.action == SessionAction::kClose) {
        pins.unpin(d.session_id);
        return std::nullopt;
      }
      return internal_error("session " + d.session_id + " is bound to worker " +
                            std::to_string(pin->worker) + ", which is unavailable");
    }
    worker = pin->worker;
    pins.refresh(d.session_id, now);
    return std::nullopt;
  }
  // Router-only affinity: follow it while the worker lives, else forget it and re-route.
  if (up) {
    worker = pin->worker;
  } else {
    pins.unpin(d.session_id);
  }
  return std::nullopt;
}

void Engine::after_routing(const ApiRequest& request, const RequestMeta& meta, int worker,
                           Clock::time_point now) {
  PinTable& pins = pins_[static_cast<size_t>(meta.frontend)];
  if (options_.contract == Contract::kHeader) {
    const bool room = pins.find(meta.session_header, now).has_value() ||
                      static_cast<int64_t>(pins.size()) < options_.affinity_max_entries;
    if (options_.affinity_ttl_s && !meta.session_header.empty() && room) {
      pins.pin(meta.session_header, worker, PinKind::kHeader,
               scaled_ms(*options_.affinity_ttl_s * 1000.0), now);
    }
    return;
  }
  const auto& d = request.session;
  if (options_.contract == Contract::kNone || d.session_id.empty()) return;
  switch (d.action) {
    case SessionAction::kOpen:
      if (options_.engine_sessions) {
        pins.pin(d.session_id, worker, PinKind::kEngine, session_ttl(d.timeout_s), now);
      }
      break;
    case SessionAction::kBind:
      pins.pin(d.session_id, worker, PinKind::kRouter, session_ttl(d.timeout_s), now);
      break;
    case SessionAction::kClose:
      pins.unpin(d.session_id);
      break;
    case SessionAction::kBare:
    case SessionAction::kNone:
      break;
  }
}

bool Engine::targeted(const RequestMeta& meta, int w) const {
  if (meta.target_instance && instance_id(options_, w) != *meta.target_instance) return false;
  if (meta.target_rank && static_cast<uint32_t>(dp_rank(options_, w)) != *meta.target_rank) {
    return false;
  }
  return true;
}

int Engine::route(const Job& job, const RequestMeta& meta) {
  std::vector<WorkerLoad> loads(workers_.size());
  for (size_t i = 0; i < workers_.size(); ++i) {
    const Worker& w = workers_[i];
    loads[i].up = w.up && targeted(meta, static_cast<int>(i));
    loads[i].active_prefill_blocks = w.prefill_blocks;
    loads[i].active_decode_blocks = w.decode_blocks;
    if (options_.router_mode == RouterMode::kKv && w.up) {
      loads[i].cached_blocks = w.cache.match(job.prompt_hashes);
    }
  }
  if (!meta.routing_key.empty()) {
    // Consistent hashing of the key over the workers that may take it, in index order.
    std::vector<int> up;
    for (size_t i = 0; i < loads.size(); ++i) {
      if (loads[i].up) up.push_back(static_cast<int>(i));
    }
    if (!up.empty()) {
      return up[splitmix64_finalize(fnv1a64(meta.routing_key)) % up.size()];
    }
  }
  return router_.choose(loads, job.prompt_blocks);
}

void Engine::admit(Worker& w, const JobPtr& job, Clock::time_point now) {
  job->state = Job::State::kActive;
  job->in_prefill = true;
  ++w.active;
  ++w.prefilling;
  w.running_blocks += job->kv_blocks;
  // Like vLLM, at least the last prompt token is always computed.
  const int64_t usable_blocks = std::max<int64_t>(job->prompt_tokens - 1, 0) / options_.block_size;
  const int64_t cached_blocks = std::min(w.cache.match(job->prompt_hashes), usable_blocks);
  job->cached_tokens = cached_blocks * options_.block_size;
  job->admitted_at = now;
  job->prefill = scaled_ms(prefill_ms(job->prompt_tokens - job->cached_tokens));
  job->itl = scaled_ms(job->itl_ms);
  stats_.record_admission(job->turn_index, job->prompt_tokens, job->cached_tokens);
  server_metrics_.on_admit(job->worker, job->prompt_tokens, job->cached_tokens);
}

std::vector<std::function<void()>> Engine::fill_slots(Worker& w, Clock::time_point now) {
  std::vector<std::function<void()>> callbacks;
  while (!shut_down_ && w.active < options_.max_num_seqs && !w.queue.empty()) {
    JobPtr job = std::move(w.queue.front());
    w.queue.pop_front();
    admit(w, job, now);
    callbacks.push_back(std::move(job->on_admit));
    job->on_admit = nullptr;
  }
  return callbacks;
}

void Engine::release(const JobPtr& job) {
  Worker& w = workers_[static_cast<size_t>(job->worker)];
  job->state = Job::State::kDone;
  --w.active;
  w.running_blocks -= job->kv_blocks;
  if (job->in_prefill) {
    --w.prefilling;
    w.prefill_blocks -= job->prompt_blocks;
  } else {
    w.decode_blocks -= job->prompt_blocks;
  }
}

void Engine::first_token(const JobPtr& job, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (job->state != Job::State::kActive || !job->in_prefill) return;
  job->ttft_ms = to_ms(now - job->arrived_at);
  job->first_token_at = now;
  stats_.record_ttft(job->turn_index, job->ttft_ms);
  server_metrics_.on_first_token(job->worker, job->prompt_tokens, job->ttft_ms / 1000.0);
  Worker& w = workers_[static_cast<size_t>(job->worker)];
  job->in_prefill = false;
  --w.prefilling;
  w.prefill_blocks -= job->prompt_blocks;
  w.decode_blocks += job->prompt_blocks;
}

void Engine::complete(const JobPtr& job, double lateness_ms) {
  // The sequence the worker holds: prompt, output, and the end-of-turn marker the chat
  // template puts after an assistant reply (so the next turn's prompt extends it).
  std::string sequence = job->prompt;
  sequence.append(output_text(job->max_tokens));
  if (job->endpoint != Endpoint::kCompletions && job->endpoint != Endpoint::kEmbeddings) {
    sequence.append(kChatMessageEnd);  // chat, responses and messages go through the template
  }
  const auto hashes = block_hashes(sequence, options_.block_size);

  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard lock(mutex_);
    if (job->state != Job::State::kActive) return;
    Worker& w = workers_[static_cast<size_t>(job->worker)];
    w.cache.insert(hashes);
    // Its ITL as emitted: complete() runs as the last token goes out, so now is its time.
    const double emitted_itl_ms =
        job->stream && job->max_tokens > 1 && job->first_token_at != Clock::time_point{}
            ? to_ms(Clock::now() - job->first_token_at) / static_cast<double>(job->max_tokens - 1)
            : -1.0;
    stats_.record_completion(job->max_tokens, lateness_ms, emitted_itl_ms);
    server_metrics_.on_end(job->worker, job->endpoint, job->stream, job->max_tokens,
                           ServerMetrics::Outcome::kSuccess);
    release(job);
    callbacks = fill_slots(w, Clock::now());
  }
  run(callbacks);
}

void Engine::abandon(const JobPtr& job, int64_t generated_tokens) {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard lock(mutex_);
    if (job->state == Job::State::kDone || job->worker < 0) return;
    Worker& w = workers_[static_cast<size_t>(job->worker)];
    const bool decoding = job->state == Job::State::kActive && !job->in_prefill;
    server_metrics_.on_end(job->worker, job->endpoint, job->stream,
                           decoding ? std::clamp<int64_t>(generated_tokens, 0, job->max_tokens) : 0,
                           ServerMetrics::Outcome::kCancelled);
    if (job->state == Job::State::kQueued) {
      const auto it = std::find(w.queue.begin(), w.queue.end(), job);
      if (it != w.queue.end()) w.queue.erase(it);
      w.prefill_blocks -= job->prompt_blocks;
      job->state = Job::State::kDone;
      job->on_admit = nullptr;
      return;
    }
    release(job);
    callbacks = fill_slots(w, Clock::now());
  }
  run(callbacks);
}

void Engine::count_rejection(Endpoint endpoint, int status) {
  std::lock_guard lock(mutex_);
  stats_.count_response(endpoint, status);
}

size_t Engine::reap(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (auto& table : pins_) n += table.reap(now);
  return n;
}

bool Engine::set_worker_up(int worker, bool up) {
  std::lock_guard lock(mutex_);
  if (worker < 0 || worker >= static_cast<int>(workers_.size())) return false;
  workers_[static_cast<size_t>(worker)].up = up;
  return true;
}

void Engine::reset() {
  std::lock_guard lock(mutex_);
  for (auto& w : workers_) {
    w.cache.clear();
    w.up = true;
    w.requests = 0;
  }
  for (auto& table : pins_) table.clear();
  frontend_cursor_ = 0;
  stats_.clear();
  server_metrics_.clear();
  router_.reseed(options_.seed);
  fault_rng_.seed(options_.seed);
}

void Engine::shutdown() {
  std::lock_guard lock(mutex_);
  shut_down_ = true;
  for (auto& w : workers_) {
    for (auto& job : w.queue) job->on_admit = nullptr;
    w.queue.clear();
  }
}

std::string Engine::sessions_json(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  for (auto& table : pins_) table.reap(now);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("contract");
  w.String(to_string(options_.contract));
  w.Key("sessions");
  w.StartArray();
  for (size_t frontend = 0; frontend < pins_.size(); ++frontend) {
    for (const auto& view : pins_[frontend].snapshot()) {
      w.StartObject();
      w.Key("session_id");
      w.String(view.session_id.data(), static_cast<rapidjson::SizeType>(view.session_id.size()));
      w.Key("frontend");
      w.Int(static_cast<int>(frontend));
      w.Key("worker");
      w.Int(view.pin.worker);
      w.Key("kind");
      w.String(to_string(view.pin.kind));
      w.Key("ttl_ms");
      w.Double(to_ms(view.pin.ttl));
      w.Key("expires_in_ms");
      w.Double(to_ms(view.pin.expires_at - now));
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

namespace {

template <class Workers>
std::vector<WorkerView> views(const Workers& workers, const Options& options) {
  std::vector<WorkerView> out;
  int id = 0;
  for (const auto& w : workers) {
    WorkerView v;
    v.instance_id = instance_id(options, id);
    v.dp_rank = dp_rank(options, id);
    v.id = id++;
    v.up = w.up;
    v.active = w.active;
    v.queued = static_cast<int64_t>(w.queue.size());
    v.cached_blocks = w.cache.size_blocks();
    v.capacity_blocks = w.cache.capacity_blocks();
    v.evicted_blocks = w.cache.evicted_blocks();
    v.requests = w.requests;
    v.prefill_blocks = w.prefill_blocks;
    v.decode_blocks = w.decode_blocks;
    out.push_back(v);
  }
  return out;
}

}  // namespace

std::string Engine::stats_json() {
  std::lock_guard lock(mutex_);
  size_t live = 0;
  for (const auto& table : pins_) live += table.size();
  return stats_.json(views(workers_, options_), static_cast<int64_t>(live));
}

std::string Engine::metrics_text() {
  std::lock_guard lock(mutex_);
  std::vector<EngineGauges> gauges;
  gauges.reserve(workers_.size());
  for (const auto& w : workers_) {
    gauges.push_back(EngineGauges{w.active, static_cast<int64_t>(w.queue.size()), w.prefilling,
                                  w.running_blocks, w.cache.capacity_blocks()});
  }
  return stats_.prometheus(views(workers_, options_), options_.model) +
         server_metrics_.prometheus(gauges, options_.model);
}

}  // namespace convoy::mock
