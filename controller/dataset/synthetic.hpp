// dataset.type synthetic: conversations drawn from the seed (docs/datasets.md).
//
// Conversation i depends only on (config, i): the dataset generates each when it is asked for,
// in any order, so a run of any length costs no memory up front.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/exact_text.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// The system prompt every conversation shares: dataset.shared_prefix_tokens tokens of prose
// ("" when 0): by the estimate, or exactly by `plan`'s tokenizer.
std::string synthetic_system_prompt(const Config& config, const Corpus& corpus = Corpus::embedded(),
                                    const TokenPlan* plan = nullptr);

// Conversation `index`: turns ~ dataset.turns; per turn input tokens ~ dataset.input_tokens
// (user text of that many tokens under the 4-bytes-per-token estimate), max_tokens ~
// dataset.output_tokens, delay_ms ~ dataset.think_time_ms (turn 0: 0). Turn 0 starts with a
// short tag naming the conversation, after the shared system prompt, so every conversation is
// distinct while the system prompt stays a common cacheable prefix. With history: recorded,
// non-final turns carry a reply of max_tokens tokens.
proto::Conversation make_synthetic_conversation(const Config& config, uint64_t index,
                                                const Corpus& corpus = Corpus::embedded());

// dataset.conversations of them, generated on demand. With `plan` (dataset.tokenizer) every
// turn's user text holds exactly its drawn input_tokens by the tokenizer (the cache-bust tag
// included; less the template overhead with count_chat_template), the system prompt exactly
// shared_prefix_tokens, a recorded reply exactly max_tokens; input_tokens_est is then exact.
// Throws ConfigError when input_tokens can draw fewer than a turn must hold. Throws ConfigError
// when the configured
// draws could make a conversation that cannot cross the wire: a turn's text, a recorded reply or
// the system prompt over proto::kMaxStringBytes, or a whole conversation over
// kMaxConversationWireBytes (judged at each draw's upper bound: the smaller of max and
// mean + 6 stddev; for a mixture, its highest component of weight > 0).
std::unique_ptr<Dataset> open_synthetic_dataset(const Config& config,
                                                const Corpus& corpus = Corpus::embedded(),
                                                std::shared_ptr<const TokenPlan> plan = nullptr);

// materialize(*open_synthetic_dataset(config)): for tests and small runs.
std::vector<proto::Conversation> make_synthetic_dataset(const Config& config,
                                                        const Corpus& corpus = Corpus::embedded());

}  // namespace convoy::controller
