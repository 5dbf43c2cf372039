// Conversation identities. The correlation id (X-Correlation-ID, Dynamo's session id) is a
// uuid4-shaped string derived from seed + conversation index, so reruns with the same seed
// reproduce it and no two conversations of a run share one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace convoy::controller {

// "xxxxxxxx-xxxx-4xxx-Yxxx-xxxxxxxxxxxx" (lowercase hex, Y in 8..b), from (seed, index) only.
std::string correlation_id(uint64_t seed, uint64_t index);

// The id of a conversation the dataset did not name: "conv-<index>".
std::string default_conversation_id(uint64_t index);

// True for the canonical uuid4 text form (version 4, RFC 4122 variant, lowercase).
bool is_uuid4(std::string_view text);

}  // namespace convoy::controller
