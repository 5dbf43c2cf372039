#include "controller/telemetry/known_metrics.hpp"

#include <array>

namespace convoy::telemetry {

namespace {

// Sources, read in each project's own code (not guessed):
// - Dynamo frontend: ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs, module
//   frontend_service, under name_prefix::FRONTEND "dynamo_frontend" (requests_total,
//   queued_requests, inflight_requests, time_to_first_token_seconds,
//   inter_token_latency_seconds, request_duration_seconds, output_tokens_total). Verified
//   against the real frontends' /metrics (tests/dynamo/claims_test.cpp): ai-dynamo 1.6.1 and
//   1.2.1 both expose all seven under these names (counters with `_total` in # TYPE, as the
//   Rust prometheus crate writes them). Dynamo's mocker (1.6.1) exposes the vLLM families
//   below (vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc,
//   vllm:gpu_cache_usage_perc, vllm:num_preemptions_total, vllm:time_to_first_token_seconds,
//   vllm:inter_token_latency_seconds, vllm:e2e_request_latency_seconds) on its DYN_SYSTEM_PORT;
//   the 1.2.1 mocker only dynamo_component_* families.
// - vLLM (v1 engine): vllm-project/vllm vllm/v1/metrics/loggers.py, PrometheusStatLogger
//   (vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc,
//   vllm:num_preemptions, vllm:prompt_tokens, vllm:generation_tokens, vllm:prefix_cache_hits,
//   vllm:prefix_cache_queries, vllm:time_to_first_token_seconds,
//   vllm:time_per_output_token_seconds, vllm:e2e_request_latency_seconds,
//   vllm:request_queue_time_seconds, vllm:request_success by finished_reason; labels
//   model_name and engine; prometheus_client adds `_total` to counters). Older
//   engines: vllm:gpu_cache_usage_perc (deprecated in 0.9 for vllm:kv_cache_usage_perc).
//   vllm:inter_token_latency_seconds: newer vLLM, as listed by llm-d-inference-sim
//   docs/metrics.md, which mirrors vLLM's names.
// - SGLang: sgl-project/sglang python/sglang/srt/metrics/collector.py (sglang:num_running_reqs,
//   sglang:num_queue_reqs, sglang:token_usage, sglang:cache_hit_rate, sglang:gen_throughput,
//   sglang:prompt_tokens_total, sglang:generation_tokens_total,
//   sglang:time_to_first_token_seconds, sglang:inter_token_latency_seconds).
// - TensorRT-LLM: NVIDIA/TensorRT-LLM tensorrt_llm/metrics/collector.py, MetricsCollector,
//   metric_prefix "trtllm_" (trtllm_num_requests_running, trtllm_num_requests_waiting,
//   trtllm_kv_cache_utilization, trtllm_kv_cache_hit_rate, trtllm_time_to_first_token_seconds,
//   trtllm_time_per_output_token_seconds, trtllm_e2e_request_latency_seconds,
//   trtllm_prompt_tokens_total, trtllm_generation_tokens_total).
// - DCGM exporter: NVIDIA/dcgm-exporter etc/default-counters.csv and etc/dcp-metrics-included.csv
//   (DCGM_FI_DEV_GPU_UTIL %, DCGM_FI_DEV_FB_USED MiB, DCGM_FI_DEV_POWER_USAGE W,
//   DCGM_FI_PROF_SM_ACTIVE ratio, DCGM_FI_PROF_GR_ENGINE_ACTIVE ratio, DCGM_FI_DEV_GPU_TEMP C).
// - convoy-mock: mock/stats.cpp (its own /metrics).
constexpr std::array<KnownMetric, 53> kKnown{{
    // Dynamo frontend
    {"dynamo_frontend_requests", "requests (Dynamo frontend)", "requests", "dynamo", "requests"},
    {"dynamo_frontend_queued_requests", "requests queued (Dynamo frontend)", "requests", "dynamo",
     "queued"},
    {"dynamo_frontend_inflight_requests", "requests in flight (Dynamo frontend)", "requests",
     "dynamo", "inflight"},
    {"dynamo_frontend_time_to_first_token_seconds", "TTFT (Dynamo frontend)", "s", "dynamo",
     "ttft"},
    {"dynamo_frontend_inter_token_latency_seconds", "ITL (Dynamo frontend)", "s", "dynamo", "itl"},
    {"dynamo_frontend_request_duration_seconds", "request duration (Dynamo frontend)", "s",
     "dynamo", "e2e_latency"},
    {"dynamo_frontend_output_tokens", "output tokens (Dynamo frontend)", "tokens", "dynamo",
     "generation_tokens"},
    // vLLM
    {"vllm:num_requests_running", "requests running (vLLM)", "requests", "vllm",
     "requests_running"},
    {"vllm:num_requests_waiting", "requests waiting (vLLM)", "requests", "vllm",
     "requests_waiting"},
    {"vllm:kv_cache_usage_perc", "KV cache usage (vLLM)", "fraction", "vllm", "kv_usage"},
    {"vllm:gpu_cache_usage_perc", "KV cache usage (vLLM, before 0.9)", "fraction", "vllm",
     "kv_usage"},
    {"vllm:num_preemptions", "preemptions (vLLM)", "requests", "vllm", "preemptions"},
    {"vllm:prompt_tokens", "prompt tokens (vLLM)", "tokens", "vllm", "prompt_tokens"},
    {"vllm:generation_tokens", "generation tokens (vLLM)", "tokens", "vllm", "generation_tokens"},
    {"vllm:prefix_cache_hits", "prefix cache hits (vLLM)", "tokens", "vllm", "prefix_cache_hits"},
    {"vllm:prefix_cache_queries", "prefix cache queries (vLLM)", "tokens", "vllm",
     "prefix_cache_queries"},
    {"vllm:time_to_first_token_seconds", "TTFT (vLLM)", "s", "vllm", "ttft"},
    {"vllm:time_per_output_token_seconds", "time per output token (vLLM)", "s", "vllm", "itl"},
    {"vllm:inter_token_latency_seconds", "ITL (vLLM)", "s", "vllm", "itl"},
    {"vllm:e2e_request_latency_seconds", "request latency (vLLM)", "s", "vllm", "e2e_latency"},
    {"vllm:request_success", "requests finished (vLLM)", "requests", "vllm", "requests"},
    {"vllm:request_queue_time_seconds", "queue time (vLLM)", "s", "vllm", "queue_time"},
    // SGLang
    {"sglang:num_running_reqs", "requests running (SGLang)", "requests", "sglang",
     "requests_running"},
    {"sglang:num_queue_reqs", "requests queued (SGLang)", "requests", "sglang", "requests_waiting"},
    {"sglang:token_usage", "KV token usage (SGLang)", "fraction", "sglang", "kv_usage"},
    {"sglang:cache_hit_rate", "prefix cache hit rate (SGLang)", "fraction", "sglang",
     "cache_hit_rate"},
    {"sglang:gen_throughput", "generation throughput (SGLang)", "tokens/s", "sglang",
     "generation_throughput"},
    {"sglang:prompt_tokens", "prompt tokens (SGLang)", "tokens", "sglang", "prompt_tokens"},
    {"sglang:generation_tokens", "generation tokens (SGLang)", "tokens", "sglang",
     "generation_tokens"},
    {"sglang:time_to_first_token_seconds", "TTFT (SGLang)", "s", "sglang", "ttft"},
    {"sglang:inter_token_latency_seconds", "ITL (SGLang)", "s", "sglang", "itl"},
    // TensorRT-LLM
    {"trtllm_num_requests_running", "requests running (TensorRT-LLM)", "requests", "trtllm",
     "requests_running"},
    {"trtllm_num_requests_waiting", "requests waiting (TensorRT-LLM)", "requests", "trtllm",
     "requests_waiting"},
    {"trtllm_kv_cache_utilization", "KV cache usage (TensorRT-LLM)", "fraction", "trtllm",
     "kv_usage"},
    {"trtllm_kv_cache_hit_rate", "KV cache hit rate (TensorRT-LLM)", "fraction", "trtllm",
     "cache_hit_rate"},
    {"trtllm_time_to_first_token_seconds", "TTFT (TensorRT-LLM)", "s", "trtllm", "ttft"},
    {"trtllm_time_per_output_token_seconds", "time per output token (TensorRT-LLM)", "s", "trtllm",
     "itl"},
    {"trtllm_e2e_request_latency_seconds", "request latency (TensorRT-LLM)", "s", "trtllm",
     "e2e_latency"},
    {"trtllm_prompt_tokens", "prompt tokens (TensorRT-LLM)", "tokens", "trtllm", "prompt_tokens"},
    {"trtllm_generation_tokens", "generation tokens (TensorRT-LLM)", "tokens", "trtllm",
     "generation_tokens"},
    // DCGM exporter
    {"DCGM_FI_DEV_GPU_UTIL", "GPU utilisation", "%", "dcgm", "gpu_util"},
    {"DCGM_FI_DEV_FB_USED", "GPU framebuffer used", "MiB", "dcgm", "fb_used"},
    {"DCGM_FI_DEV_POWER_USAGE", "GPU power", "W", "dcgm", "power"},
    {"DCGM_FI_PROF_SM_ACTIVE", "SM activity", "fraction", "dcgm", "sm_active"},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "graphics engine activity", "fraction", "dcgm",
     "gr_engine_active"},
    {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature", "C", "dcgm", "gpu_temp"},
    // convoy-mock
    {"convoy_mock_requests", "responses (convoy-mock)", "requests", "convoy-mock", "requests"},
    {"convoy_mock_time_to_first_token_seconds", "TTFT (convoy-mock)", "s", "convoy-mock", "ttft"},
    {"convoy_mock_prompt_tokens", "prompt tokens (convoy-mock)", "tokens", "convoy-mock",
     "prompt_tokens"},
    {"convoy_mock_cached_tokens", "cached prompt tokens (convoy-mock)", "tokens", "convoy-mock",
     "prefix_cache_hits"},
    {"convoy_mock_completion_tokens", "completion tokens (convoy-mock)", "tokens", "convoy-mock",
     "generation_tokens"},
    {"convoy_mock_worker_active_sequences", "sequences running (convoy-mock)", "requests",
     "convoy-mock", "requests_running"},
    {"convoy_mock_worker_queued_requests", "requests queued (convoy-mock)", "requests",
     "convoy-mock", "requests_waiting"},
}};

const KnownMetric* find(std::string_view family) {
  for (const KnownMetric& k : kKnown) {
    if (k.family == family) return &k;
  }
  return nullptr;
}

}  // namespace

std::span<const KnownMetric> known_metrics() { return kKnown; }

const KnownMetric* known_metric(std::string_view family) {
  if (const KnownMetric* k = find(family)) return k;
  constexpr std::string_view kTotal = "_total";
  if (family.size() > kTotal.size() && family.substr(family.size() - kTotal.size()) == kTotal) {
    return find(family.substr(0, family.size() - kTotal.size()));
  }
  return nullptr;
}

}  // namespace convoy::telemetry
