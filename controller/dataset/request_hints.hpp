// What a conversation tells the server about itself (dataset.tenants, dataset.agent_hints): a
// tenant drawn by weight, whose name goes out as nvext.cache_salt (Dynamo isolates each salt's
// KV cache), and Dynamo's nvext.agent_hints (priority, strict_priority, osl,
// speculative_prefill). Drawn once per conversation from (seed, index) only, so every worker
// count gives the same; sub-agents take their lead's. Applied over any dataset type: a turn's
// own extra_json (a JSONL row's "extra") keeps the values it already gives.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// One conversation's draws.
struct ConversationHints {
  std::string tenant;                      // "" without dataset.tenants
  std::optional<int64_t> priority;         // agent_hints.priority
  std::optional<int64_t> strict_priority;  // agent_hints.strict_priority
};
ConversationHints draw_hints(const DatasetConfig& d, uint64_t seed, uint64_t index);

// Sets c.tenant and c.priority and merges {"nvext": {"cache_salt", "agent_hints"}} into every
// turn of the lead and its sub-agents (osl: each turn's max_tokens, when agent_hints.osl).
void apply_hints(const DatasetConfig& d, uint64_t seed, proto::Conversation& c);

// `inner` unchanged when the config has neither key; otherwise a dataset whose conversations
// carry them.
std::unique_ptr<Dataset> with_request_hints(std::unique_ptr<Dataset> inner, const Config& config);

}  // namespace convoy::controller
