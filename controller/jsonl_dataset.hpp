// dataset.type jsonl: one conversation per line (docs/datasets.md).
//
//   single-turn: {"text": "..."} or {"messages": [...]}, optional "max_tokens", "extra",
//                "conversation_id", "reply"
//   multi-turn:  {"conversation_id": "...", "turns": [{"text"|"messages", "delay_ms",
//                "max_tokens", "extra", "reply"}, ...]}
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "controller/corpus.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// Parses and validates the whole input, then keeps the first dataset.conversations. `source`
// names the input in errors: ConfigError "SOURCE:LINE: what is wrong".
std::vector<proto::Conversation> parse_jsonl_dataset(std::istream& in, const std::string& source,
                                                     const Config& config,
                                                     const Corpus& corpus = Corpus::embedded());

}  // namespace convoy::controller
