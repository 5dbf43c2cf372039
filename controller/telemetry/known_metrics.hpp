// The curated headline series: metric families of the servers convoy drives (Dynamo frontend,
// vLLM, SGLang, TensorRT-LLM) and of NVIDIA's DCGM exporter, by the names those projects really
// give them (sources cited in known_metrics.cpp), with a readable title and unit. summary.json
// marks them `headline: true`; every other series is still recorded and listed.
#pragma once

#include <span>
#include <string_view>

namespace convoy::telemetry {

struct KnownMetric {
  std::string_view family;  // the # TYPE family name (a counter's without `_total`)
  std::string_view title;   // e.g. "requests waiting (vLLM)"
  std::string_view unit;    // e.g. "requests", "fraction", "s", "W", "MiB", "%"
  std::string_view source;  // "vllm" | "sglang" | "trtllm" | "dynamo" | "dcgm" | "convoy-mock"
  // What it measures, the same word whichever server says it, so the report can pair client and
  // server figures without knowing each project's names: "requests_running",
  // "requests_waiting", "kv_usage" (a fraction 0..1), "preemptions", "prompt_tokens",
  // "generation_tokens", "prefix_cache_hits", "prefix_cache_queries", "ttft", "itl",
  // "e2e_latency", "queue_time", "inflight", "queued", "requests", "gpu_util" (%), "fb_used",
  // "power", "sm_active", "gpu_temp", "cache_hit_rate", "generation_throughput",
  // "gr_engine_active". Values are added, never renamed (docs/telemetry.md).
  std::string_view role;
};

// The known family `family` belongs to (also matched with a trailing `_total` removed, as
// prometheus_client names counters in the 0.0.4 text format), or nullptr.
const KnownMetric* known_metric(std::string_view family);

// The whole table (tests check each family against the real servers' /metrics).
std::span<const KnownMetric> known_metrics();

}  // namespace convoy::telemetry
