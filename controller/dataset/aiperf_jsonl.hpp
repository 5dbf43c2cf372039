// dataset.type aiperf_single_turn and aiperf_multi_turn: AIPerf 0.13.0's custom JSONL datasets
// (its SingleTurn and MultiTurn models), accepted as they are (docs/datasets.md "AIPerf JSONL").
//
//   single_turn: {"text"|"texts", "session_id", "delay", "output_length", "extra", "role", "type"}
//                rows sharing a session_id are one conversation, in file order (as AIPerf groups
//                them); a row without one is a conversation of its own.
//   multi_turn:  {"session_id", "turns": [single-turn objects], "type"}
//
// Fields convoy honours map onto its turn (text -> user text, several texts -> one user message
// of text parts, delay -> think time, output_length -> max_tokens, extra -> merged into the
// body); the rest (images, audio, video, timestamp, a role other than user) are errors naming
// file:line:key and the reason.
#pragma once

#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/sharegpt.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// What the validating pass mapped (counts over the whole file, for convert's report).
struct AiperfStats {
  uint64_t rows = 0;
  uint64_t conversations = 0;  // before dataset.conversations
  uint64_t turns = 0;          // after dataset.max_turns
  uint64_t texts_joined = 0;   // turns whose several texts became text parts of one message
  uint64_t delays = 0;         // turns with "delay"
  uint64_t first_delays = 0;   // of those, on a conversation's first turn (not honoured)
  uint64_t output_lengths = 0;
  uint64_t extras = 0;
  uint64_t sessions = 0;   // conversations named by session_id
  uint64_t cut_turns = 0;  // beyond dataset.max_turns
};

// `multi`: aiperf_multi_turn, else aiperf_single_turn. Validates all of `in` (ConfigError
// "SOURCE:LINE: key: what is wrong"), keeps each kept row's byte offset, and reads rows back from
// `rows`. `stats` is filled when not null; options.raw as in sharegpt.hpp.
std::unique_ptr<Dataset> index_aiperf_dataset(std::istream& in, const std::string& source,
                                              std::shared_ptr<const RowSource> rows, bool multi,
                                              const Config& config,
                                              const FileDatasetOptions& options = {},
                                              AiperfStats* stats = nullptr,
                                              const Corpus& corpus = Corpus::embedded());

// index_aiperf_dataset over the file at `path`.
std::unique_ptr<Dataset> open_aiperf_dataset(const std::string& path, bool multi,
                                             const Config& config,
                                             const FileDatasetOptions& options = {},
                                             AiperfStats* stats = nullptr,
                                             const Corpus& corpus = Corpus::embedded());

// Every conversation of an in-memory input (tests, small inputs).
std::vector<proto::Conversation> parse_aiperf_dataset(std::istream& in, const std::string& source,
                                                      bool multi, const Config& config,
                                                      AiperfStats* stats = nullptr);

// One line per mapping `stats` counted, e.g. "output_length -> max_tokens: 12 turns".
std::vector<std::string> describe_aiperf_stats(const AiperfStats& stats);

}  // namespace convoy::controller
