// The mock's /metrics as real servers name them, so convoy's server telemetry (telemetry.*) sees
// what it would see in front of vLLM behind a Dynamo frontend:
//
// - vLLM, v1 engine: vllm-project/vllm vllm/v1/metrics/loggers.py PrometheusStatLogger (commit
//   005a810b), exposed by prometheus_client (counters get `_total`), labels model_name and
//   engine; one engine per simulated worker, engine = the worker index.
// - Dynamo's frontend: ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs
//   (name_prefix::FRONTEND "dynamo_frontend", frontend_service::*) and
//   lib/llm/src/http/service/metrics.rs Metrics::build (labels, buckets, when each moves).
//
// Not thread-safe on its own: the Engine holds its lock around every call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "mock/api_request.hpp"

namespace convoy::mock {

// vllm:time_to_first_token_seconds's buckets (loggers.py, histogram_time_to_first_token).
inline constexpr std::array<double, 22> kVllmTtftBucketsS = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
// dynamo_frontend_time_to_first_token_seconds's buckets: metrics.rs generate_log_buckets(0.001,
// 480.0, 18) (DYN_METRICS_TTFT_{MIN,MAX,COUNT} defaults): 0, then 17 log-spaced values rounded
// to 2 significant figures.
inline constexpr std::array<double, 18> kDynamoTtftBucketsS = {
    0.0, 0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1,   0.22,  0.47,
    1.0, 2.2,    4.7,    10.0, 22.0,  48.0,  100.0, 220.0, 480.0};

// A Prometheus histogram with fixed upper bounds: cumulative at render time.
class BucketHistogram {
 public:
  explicit BucketHistogram(std::span<const double> bounds) : bounds_(bounds) {
    counts_.assign(bounds.size(), 0);
  }
  void observe(double v);
  // `name`_bucket{labels,le}, _sum, _count; `labels` is "k=\"v\",..." (no braces).
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::span<const double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative
  double sum_ = 0;
  int64_t count_ = 0;
};

// A worker's instantaneous state, read at scrape time.
struct EngineGauges {
  int64_t running = 0;         // admitted sequences (prefill or decode)
  int64_t waiting = 0;         // queued for a sequence slot
  int64_t prefilling = 0;      // admitted, first token not yet out
  int64_t running_blocks = 0;  // KV blocks the running sequences hold
  int64_t capacity_blocks = 0;
};

class ServerMetrics {
 public:
  // How a request the engine took ended, as Dynamo's InflightGuard labels it.
  enum class Outcome { kSuccess, kCancelled, kRejected };

  // A sequence was admitted: vLLM's scheduler queries the prefix cache for its prompt.
  void on_admit(int worker, int64_t prompt_tokens, int64_t cached_tokens);
  // Prefill finished and the first token is out (vLLM counts the prompt here).
  void on_first_token(int worker, int64_t prompt_tokens, double ttft_s);
  // The request ended after generating `generated_tokens`. `http_status` only for kRejected.
  void on_end(int worker, Endpoint endpoint, bool stream, int64_t generated_tokens, Outcome outcome,
              int http_status = 0);
  void clear();

  // The exposition text (every family with HELP and TYPE), for `model` and one gauge row per
  // worker.
  std::string prometheus(const std::vector<EngineGauges>& workers, const std::string& model) const;

 private:
  struct EngineRow {
    int64_t prompt_tokens = 0;
    int64_t generation_tokens = 0;
    int64_t prefix_cache_queries = 0;
    int64_t prefix_cache_hits = 0;
    BucketHistogram ttft{kVllmTtftBucketsS};
  };
  EngineRow& engine(int worker);
  void render_vllm(std::string& out, const std::vector<EngineGauges>& workers,
                   const std::string& model) const;
  void render_dynamo(std::string& out, const std::vector<EngineGauges>& workers,
                     const std::string& model) const;

  std::vector<EngineRow> engines_;  // by worker index, grown on first use
  // dynamo_frontend_requests_total by (endpoint, stream, status, error_type).
  std::map<std::tuple<int, bool, std::string, std::string>, int64_t> requests_;
  BucketHistogram frontend_ttft_{kDynamoTtftBucketsS};
  int64_t frontend_output_tokens_ = 0;
};

}  // namespace convoy::mock
