// The curated headline series: metric families of the servers convoy drives (Dynamo frontend,
// vLLM, SGLang, TensorRT-LLM) and of NVIDIA's DCGM exporter, by the names those projects really
// give them (sources cited in known_metrics.cpp), with a readable title and unit. summary.json
// marks them `headline: true`; every other series is still recorded and listed.
#pragma once

#include <string_view>

namespace convoy::telemetry {

struct KnownMetric {
  std::string_view family;  // the # TYPE family name (a counter's without `_total`)
  std::string_view title;   // e.g. "requests waiting (vLLM)"
  std::string_view unit;    // e.g. "requests", "fraction", "s", "W", "MiB", "%"
  std::string_view source;  // "vllm" | "sglang" | "trtllm" | "dynamo" | "dcgm" | "convoy-mock"
};

// The known family `family` belongs to (also matched with a trailing `_total` removed), or
// nullptr.
const KnownMetric* known_metric(std::string_view family);

}  // namespace convoy::telemetry
