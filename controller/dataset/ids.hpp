// Conversation identities. The correlation id (X-Correlation-ID, Dynamo's session id) is a
// uuid4-shaped string derived from seed + conversation index, so reruns with the same seed
// reproduce it and no two conversations of a run share one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/messages.hpp"

namespace convoy::controller {

// "xxxxxxxx-xxxx-4xxx-Yxxx-xxxxxxxxxxxx" (lowercase hex, Y in 8..b), from (seed, index) only.
std::string correlation_id(uint64_t seed, uint64_t index);

// A sub-agent's correlation id: uuid4-shaped like the lead's (36 bytes, well under Dynamo's
// 256-byte session-id limit), from (seed, the lead's index, the sub-agent's position in
// Conversation.subagents) only, on a stream of its own: never equal to a lead's id or to another
// sub-agent's (odds of a collision about 2^-122 per pair).
std::string subagent_correlation_id(uint64_t seed, uint64_t lead_index, uint64_t position);

// Sets the ids of a family that runs as conversation `index`: the lead's correlation id and each
// sub-agent's. The run calls it when the dataset cycles (index >= size), so every cycle's family
// gets new ids, and `cycle` > 0 suffixes every conversation_id with "#<cycle>".
void set_family_ids(proto::Conversation& conversation, uint64_t seed, uint64_t index,
                    uint64_t cycle);

// The id of a conversation the dataset did not name: "conv-<index>".
std::string default_conversation_id(uint64_t index);
// The id of a sub-agent the dataset did not name: "<lead's conversation_id>/sub<position>".
std::string default_subagent_id(std::string_view lead_id, uint64_t position);

// True for the canonical uuid4 text form (version 4, RFC 4122 variant, lowercase).
bool is_uuid4(std::string_view text);

}  // namespace convoy::controller
