// session_routing.mode's routers besides Dynamo's (sglang_gateway, sglang_session, vllm_dp_rank,
// custom) and session_routing.custom / dp_ranks: reading them, and the places each writes a
// request's routing key (SessionRoutingSettings.writes), checked so that no two modes write the
// same header or body path.
#pragma once

#include <string>
#include <vector>

#include "controller/config/yaml_util.hpp"
#include "proto/messages.hpp"

namespace convoy {

// The names each preset writes, read in the routers' own sources:
// SGLang Model Gateway's manual and consistent-hashing policies read the header
// X-SMG-Routing-Key (sgl-model-gateway policies; AIPerf's SmgRoutingKeyRouting sends it);
// SGLang's OpenAI server reads the body's top-level "session_id" (ChatCompletionRequest and
// CompletionRequest in python/sglang/srt/entrypoints/openai/protocol.py); vLLM's OpenAI server
// pins a request to a data-parallel engine by the header X-data-parallel-rank
// (_get_data_parallel_rank in vllm/entrypoints/openai/serving_engine.py: an integer).
inline constexpr char kSmgRoutingKeyHeader[] = "X-SMG-Routing-Key";
inline constexpr char kSglangSessionPath[] = "session_id";
inline constexpr char kVllmDpRankHeader[] = "X-data-parallel-rank";

// session_routing.mode as one name or a list: Dynamo's modes (off, bind, legacy, header, auto;
// at most one, and off only alone) into r.mode, the other routers' into r.presets. Then
// session_routing.custom and dp_ranks, and r.writes, disjoint. Throws ConfigError naming the key.
void read_routing_modes(const yaml_util::Section& routing, proto::SessionRoutingSettings& r);

// YAML for to_yaml: the mode as written back (a name, or a flow list when presets are listed),
// and the custom / dp_ranks lines.
std::string routing_mode_yaml(const proto::SessionRoutingSettings& r);
std::string routing_custom_yaml(const proto::SessionRoutingSettings& r);

}  // namespace convoy
