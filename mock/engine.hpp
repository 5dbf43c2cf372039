// The simulated Dynamo deployment behind the HTTP frontend: router, session pins, N workers
// with prefix KV caches and FIFO admission, seeded faults, and the statistics tests read.
//
// Thread-safe: one mutex guards everything; every call is short. Times are real (already
// divided by --speedup). The HTTP layer drives each request's timeline with its own timer:
//   submit() -> [queued ... admitted: on_admit] -> prefill -> first_token() -> decode -> complete()
// or abandon() at any point when the client goes away.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "mock/api_error.hpp"
#include "mock/api_request.hpp"
#include "mock/options.hpp"
#include "mock/pin_table.hpp"
#include "mock/prefix_cache.hpp"
#include "mock/router.hpp"
#include "mock/server_metrics.hpp"
#include "mock/stats.hpp"

namespace convoy::mock {

// Request facts taken from HTTP headers.
struct RequestMeta {
  std::string correlation_id;  // X-Correlation-ID
  // Header contract: the session id as Dynamo reads it (mock/session_headers.hpp: trimmed,
  // X-Dynamo-Session-ID first, then agent-native headers). Other contracts: X-Dynamo-Session-ID
  // as sent.
  std::string session_header;
  std::string parent_session_id;  // header contract; "" = none
  std::optional<bool> session_final;
  int frontend = 0;  // Engine::pick_frontend
  // An explicit worker pin: x-worker-instance-id / x-dp-rank, else nvext.backend_instance_id /
  // nvext.dp_rank (headers win, as Dynamo's apply_header_routing_overrides has it).
  std::optional<uint64_t> target_instance;
  std::optional<uint32_t> target_rank;
  // Other routers' session keys: SGLang Model Gateway's X-SMG-Routing-Key header, else SGLang's
  // body session_id. A key goes to one worker by a hash of it (the gateway's consistent hashing)
  // when no pin or explicit target decides; "" = none.
  std::string routing_key;
};

// Faults drawn for one request; they trigger at token `fault_token` of the stream.
struct Faults {
  bool reset = false;
  bool malformed = false;
  bool stall = false;
};

struct Job {
  enum class State { kQueued, kActive, kDone };

  Endpoint endpoint = Endpoint::kChat;
  bool stream = false;
  std::string prompt;  // flattened prompt bytes
  std::vector<uint64_t> prompt_hashes;
  int64_t prompt_tokens = 0;
  int64_t max_tokens = 0;
  double itl_ms = 0;          // the requested model's decode step (model ms, before speedup)
  int64_t prompt_blocks = 0;  // ceil(prompt_tokens / block_size): the router's load unit
  int64_t priority = 0;       // nvext.agent_hints.priority: a higher one is admitted first
  int64_t kv_blocks = 0;      // ceil((prompt + max tokens) / block_size): held while running
  int worker = -1;
  int frontend = 0;
  int64_t turn_index = 0;
  std::string stats_key;  // per-session statistics key ("" = none)
  Faults faults;

  // Filled at admission.
  int64_t cached_tokens = 0;
  Clock::time_point arrived_at{};
  Clock::time_point admitted_at{};
  Clock::duration prefill{};           // real time
  Clock::duration itl{};               // real time per output token
  double ttft_ms = 0;                  // set by first_token()
  Clock::time_point first_token_at{};  // set by first_token(): when the first token went out

  State state = State::kQueued;
  bool in_prefill = false;
  std::function<void()> on_admit;  // called (outside the lock) when a queued job is admitted
};
using JobPtr = std::shared_ptr<Job>;

struct Submitted {
  JobPtr job;
  bool admitted = false;  // a slot was free: start now; otherwise wait for on_admit
};

class Engine {
 public:
  explicit Engine(const Options& options);

  // Routes and enqueues a request, applying its session directive. Returns the job (admitted
  // when a slot was free; otherwise `on_admit` fires later, on another thread perhaps) or the
  // error to answer.
  std::variant<Submitted, ApiError> submit(ApiRequest&& request, const RequestMeta& meta,
                                           std::function<void()> on_admit, Clock::time_point now);
  // Which frontend (binding table) serves a request (--frontends, --ingress-hash).
  int pick_frontend(std::string_view session_id);
  void first_token(const JobPtr& job, Clock::time_point now);
  // The request finished: its prompt and output blocks enter the worker's cache.
  // `lateness_ms`: how far behind schedule its latest token went out (event-loop health).
  void complete(const JobPtr& job, double lateness_ms);
  // The client went away (or a fault cut the stream): free the slot, cache nothing.
  // `generated_tokens`: output tokens produced so far (the server counts them).
  void abandon(const JobPtr& job, int64_t generated_tokens = 0);

  // Errors answered before a job existed (bad JSON, wrong model, contract rejections).
  void count_rejection(Endpoint endpoint, int status);
  size_t reap(Clock::time_point now);
  bool set_worker_up(int worker, bool up);
  void reset();
  // Drops queued jobs' callbacks so no admission fires after the event loop is gone.
  void shutdown();

  std::string sessions_json(Clock::time_point now);
  std::string stats_json();
  std::string metrics_text();

  const Options& options() const { return options_; }

 private:
  struct Worker {
    explicit Worker(int64_t capacity) : cache(capacity) {}
    PrefixCache cache;
    bool up = true;
    int active = 0;              // admitted sequences
    int prefilling = 0;          // admitted, first token not out yet
    int64_t running_blocks = 0;  // Job::kv_blocks of the admitted sequences
    std::deque<JobPtr> queue;
    int64_t prefill_blocks = 0;  // queued + prefilling
    int64_t decode_blocks = 0;
    int64_t requests = 0;
  };

  std::optional<ApiError> apply_session(const ApiRequest& request, const RequestMeta& meta,
                                        int& worker, Clock::time_point now);
  // Header contract (Dynamo >= 1.3): X-Dynamo-Session-ID affinity in the request's frontend.
  // `passed_over`: a bound worker this request did not take (soft mode), for counting moves.
  std::optional<ApiError> header_affinity(const RequestMeta& meta, int& worker,
                                          std::optional<int>& passed_over, Clock::time_point now);
  // Soft mode keeps a binding while its worker is eligible: up, and not saturated while another
  // up worker has a free sequence slot.
  bool eligible(int worker) const;
  void after_routing(const ApiRequest& request, const RequestMeta& meta, int worker,
                     Clock::time_point now);
  int route(const Job& job, const RequestMeta& meta);
  // Whether worker `w` is the request's explicit target (true when it names none).
  bool targeted(const RequestMeta& meta, int w) const;
  void admit(Worker& worker, const JobPtr& job, Clock::time_point now);
  // Admits queued jobs into free slots; returns their callbacks to run after unlocking.
  std::vector<std::function<void()>> fill_slots(Worker& worker, Clock::time_point now);
  void release(const JobPtr& job);
  Clock::duration scaled_ms(double model_ms) const;
  Clock::duration session_ttl(const std::optional<double>& timeout_s) const;
  static void run(std::vector<std::function<void()>>& callbacks);

  const Options options_;
  std::mutex mutex_;
  std::vector<Worker> workers_;
  Router router_;
  std::vector<PinTable> pins_;  // one binding table per frontend
  uint64_t frontend_cursor_ = 0;
  std::mt19937_64 fault_rng_;
  Stats stats_;
  ServerMetrics server_metrics_;  // /metrics as vLLM and Dynamo's frontend name them
  bool shut_down_ = false;
};

}  // namespace convoy::mock
