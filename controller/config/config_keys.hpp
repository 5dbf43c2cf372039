// convoy.yaml's key table: the keys of every section, and the YAML spellings of the config's
// enums (indexed by the enum's value). Shared by the reader (config.cpp, which checks every key
// against it and suggests the nearest for an unknown one), the writer (config_to_yaml.cpp) and
// the enums' to_string (config_keys.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "proto/messages.hpp"

namespace convoy::config_keys {

using Keys = std::vector<std::string_view>;

// Enum spellings, indexed by the enum's value. Endpoint, history and routing mode are the wire
// enums: their names live in proto/messages.hpp and YAML strings go through proto::parse_*.
inline const Keys kEndpointNames(proto::kEndpointNames.begin(), proto::kEndpointNames.end());
inline const Keys kResponsesStateNames(proto::kResponsesStateNames.begin(),
                                       proto::kResponsesStateNames.end());
inline const Keys kHistoryNames(proto::kHistoryModeNames.begin(), proto::kHistoryModeNames.end());
inline const Keys kRoutingModeNames(proto::kSessionRoutingModeNames.begin(),
                                    proto::kSessionRoutingModeNames.end());
inline const Keys kDatasetTypeNames = {
    "synthetic",         "jsonl",        "mooncake",  "sharegpt", "aiperf_single_turn",
    "aiperf_multi_turn", "dynamo_trace", "weka_trace"};
inline const Keys kDatasetTextNames = {"corpus", "random_tokens"};
inline const Keys kLoadModeNames = {"concurrency", "rate", "trace", "users"};
inline const Keys kArrivalNames = {"constant", "poisson", "gamma"};
inline const Keys kRampShapeNames = {"linear", "exponential"};
inline const Keys kProfileKindNames = {"single", "stages", "sweep", "search"};
inline const Keys kMockContractNames = {"none", "legacy", "bind", "header"};
inline const Keys kMockRouterNames = {"kv", "round-robin", "random"};

// The keys of every section, in the order docs/config.md lists them (also the order to_yaml
// writes them).
inline const Keys kTopKeys = {
    "name",    "seed",   "target",    "mock", "dataset", "load", "session_routing",
    "workers", "output", "telemetry", "slo",  "fail_on"};
inline const Keys kTargetKeys = {"url",
                                 "endpoint",
                                 "model",
                                 "models",
                                 "streaming",
                                 "api_key_env",
                                 "headers",
                                 "extra_body",
                                 "request_timeout_s",
                                 "connect_timeout_s",
                                 "use_server_token_counts",
                                 "max_completion_tokens",
                                 "http2",
                                 "insecure",
                                 "max_response_bytes",
                                 "urls",
                                 "server_timing",
                                 "path",
                                 "responses_state"};
inline const Keys kMockKeys = {"workers", "contract",        "router_mode", "itl_ms",
                               "speedup", "engine_sessions", "extra_args"};
inline const Keys kDatasetKeys = {"type",
                                  "path",
                                  "conversations",
                                  "turns",
                                  "input_tokens",
                                  "output_tokens",
                                  "shared_prefix_tokens",
                                  "think_time_ms",
                                  "history",
                                  "subagents",
                                  "prefixes",
                                  "tokenizer",
                                  "count_chat_template",
                                  "tenants",
                                  "agent_hints",
                                  "text",
                                  "max_turns"};
inline const Keys kAgentHintsKeys = {"priority", "strict_priority", "osl", "speculative_prefill"};
inline const Keys kWeightedNameKeys = {"name", "weight"};
inline const Keys kPrefixesKeys = {"pool", "tokens", "per_conversation"};
inline const Keys kSubagentKeys = {"probability", "count", "turns", "spawn_after_turn"};
inline const Keys kDistributionKeys = {"mean", "stddev", "min", "max", "mix"};
inline const Keys kMixComponentKeys = {"weight", "mean", "stddev", "min", "max"};
inline const Keys kLoadKeys = {"mode",       "concurrency",     "rate",     "arrival",
                               "burstiness", "sessions",        "requests", "duration_s",
                               "grace_s",    "warmup_sessions", "cancel",   "warmup_s",
                               "stages",     "sweep",           "search",   "abort_on",
                               "trace",      "trials",          "warmup",   "prefill_concurrency"};
inline const Keys kWarmupKeys = {"concurrency", "rate", "duration_s", "sessions"};
inline const Keys kTraceKeys = {"speedup", "start_offset_s", "end_offset_s", "max_idle_gap_s"};
inline const Keys kCancelKeys = {"fraction", "after_ms"};
inline const Keys kRoutingKeys = {"mode",   "timeout_s", "header_name", "final_marker",
                                  "verify", "custom",    "dp_ranks"};
inline const Keys kFinalMarkerNames(proto::kFinalMarkerNames.begin(),
                                    proto::kFinalMarkerNames.end());
inline const Keys kWorkersKeys = {"local",  "listen",     "results_listen",
                                  "expect", "curve_keys", "ready_timeout_s"};
inline const Keys kOutputKeys = {
    "dir", "records", "html", "slice_s", "metrics_listen", "metrics_linger_s", "aiperf_export"};
inline const Keys kFailOnKeys = {"error_rate"};
inline const Keys kTelemetryKeys = {"interval_s", "timeout_s", "max_series", "endpoints"};
inline const Keys kTelemetryEndpointKeys = {"name", "url", "headers", "required"};
// Metrics measured in milliseconds, which an SLO (goodput threshold) may name.
inline const Keys kSloMetrics = {"time_to_first_token", "time_to_second_token",
                                 "inter_token_latency", "inter_chunk_latency",
                                 "request_latency",     "corrected_request_latency",
                                 "schedule_lag"};
inline const Keys kOutputSubstitutions = {"name", "timestamp"};
// Header values to_yaml never prints.
inline const Keys kSecretHeaders = {"authorization", "proxy-authorization", "api-key", "x-api-key"};

// Every dotted key path a config may hold ("target.url", "load.stages", ...), for did-you-mean.
std::vector<std::string> known_paths();

}  // namespace convoy::config_keys
