// dataset.type jsonl: one conversation per line (docs/datasets.md).
//
//   single-turn: {"text": "..."} or {"messages": [...]}, optional "max_tokens", "extra",
//                "conversation_id", "reply"
//   multi-turn:  {"conversation_id": "...", "turns": [{"text"|"messages", "delay_ms",
//                "max_tokens", "extra", "reply"}, ...]}
//   sub-agents:  either form with "parent" (another row's conversation_id) and
//                "spawn_after_turn" (1-based, 1 .. the parent's turns). A row without "parent"
//                is a lead; conversation(i) is lead i with its whole family in
//                Conversation.subagents (depth first, parents before children); size() counts
//                the leads, and dataset.conversations cuts leads (with their families).
#pragma once

#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// Validates all of `in` in one streaming pass (`source` names it in errors: ConfigError
// "SOURCE:LINE: key: what is wrong"), keeps the byte offset of each of the first
// dataset.conversations rows, and reads conversations back from `rows` (the same bytes) when
// asked. Memory: 8 bytes per conversation and 16 per sub-agent row, plus while validating a
// 16-byte hash and 40 bytes per explicit conversation_id and the parent's id per sub-agent row.
std::unique_ptr<Dataset> index_jsonl_dataset(std::istream& in, const std::string& source,
                                             std::shared_ptr<const RowSource> rows,
                                             const Config& config,
                                             const Corpus& corpus = Corpus::embedded());

// index_jsonl_dataset over the file at `path`.
std::unique_ptr<Dataset> open_jsonl_dataset(const std::string& path, const Config& config,
                                            const Corpus& corpus = Corpus::embedded());

// Every conversation of an in-memory input (tests, small inputs).
std::vector<proto::Conversation> parse_jsonl_dataset(std::istream& in, const std::string& source,
                                                     const Config& config,
                                                     const Corpus& corpus = Corpus::embedded());

}  // namespace convoy::controller
