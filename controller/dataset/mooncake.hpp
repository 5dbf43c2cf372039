// dataset.type mooncake: the Mooncake trace format as AIPerf reads it (docs/datasets.md).
//
//   {"timestamp": ms, "input_length": N, "output_length": M, "hash_ids": [..],
//    "session_id": "...", "delay": ms}
//
// convoy's own keys on a session's first row, "parent_session_id" (an earlier session) and
// "spawn_after_turn" (1 .. the parent's rows), make the session a sub-agent in its parent's
// family: the dynamo_trace and weka_trace mappings write them (trace_rows.hpp).
//
// Each hash id stands for one block of kMooncakeBlockTokens tokens whose text depends only on
// (seed, id): equal ids give equal text, so equal id prefixes give equal prompt prefixes and a
// server's prefix cache behaves as it did when the trace was recorded.
#pragma once

#include <cstdint>
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

// AIPerf's default block size (--isl-block-size) and Mooncake's published traces.
inline constexpr int64_t kMooncakeBlockTokens = 512;

// The text of one hash block: exactly block_tokens * kBytesPerToken bytes.
std::string mooncake_block_text(uint64_t seed, uint64_t hash_id, const Corpus& corpus,
                                int64_t block_tokens = kMooncakeBlockTokens);

// Upper bounds a row must meet (docs/datasets.md): a generated prompt is one string on the wire,
// so input_length is at most proto::kMaxStringBytes / kBytesPerToken tokens; a timestamp is a
// finite number of ms up to 1e15 (Unix-epoch milliseconds fit), and the first-row timestamps a
// trace keeps span at most 1e12 ms (about 31.7 years), so every start fits int64 nanoseconds.
inline constexpr int64_t kMaxInputLengthTokens =
    static_cast<int64_t>(proto::kMaxStringBytes) / kBytesPerToken;
inline constexpr double kMaxTimestampMs = 1e15;
inline constexpr double kMaxTraceSpanMs = 1e12;

// Validates all of `in` in one streaming pass, groups rows by session_id (file order) and keeps
// the first dataset.conversations, remembering only each row's byte offset (and with load.mode
// trace each conversation's start); conversations are read back from `rows` (the same bytes)
// and their text built when asked. With load.mode trace every conversation's first row needs a
// timestamp and start_ns is that timestamp relative to the earliest one kept; other modes give
// 0. Errors: ConfigError "SOURCE:LINE: key: what is wrong".
std::unique_ptr<Dataset> index_mooncake_trace(std::istream& in, const std::string& source,
                                              std::shared_ptr<const RowSource> rows,
                                              const Config& config,
                                              const Corpus& corpus = Corpus::embedded(),
                                              int64_t block_tokens = kMooncakeBlockTokens);

// index_mooncake_trace over the file at `path`.
std::unique_ptr<Dataset> open_mooncake_trace(const std::string& path, const Config& config,
                                             const Corpus& corpus = Corpus::embedded());

// Every conversation of an in-memory trace (tests, small inputs).
std::vector<proto::Conversation> parse_mooncake_trace(std::istream& in, const std::string& source,
                                                      const Config& config,
                                                      const Corpus& corpus = Corpus::embedded(),
                                                      int64_t block_tokens = kMooncakeBlockTokens);

}  // namespace convoy::controller
