// dataset.type mooncake: the Mooncake trace format as AIPerf reads it (docs/datasets.md).
//
//   {"timestamp": ms, "input_length": N, "output_length": M, "hash_ids": [..],
//    "session_id": "...", "delay": ms}
//
// Each hash id stands for one block of kMooncakeBlockTokens tokens whose text depends only on
// (seed, id): equal ids give equal text, so equal id prefixes give equal prompt prefixes and a
// server's prefix cache behaves as it did when the trace was recorded.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "controller/corpus.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// AIPerf's default block size (--isl-block-size) and Mooncake's published traces.
inline constexpr int64_t kMooncakeBlockTokens = 512;

// The text of one hash block: exactly block_tokens * kBytesPerToken bytes.
std::string mooncake_block_text(uint64_t seed, uint64_t hash_id, const Corpus& corpus,
                                int64_t block_tokens = kMooncakeBlockTokens);

// Parses and validates the whole input, groups rows by session_id (file order), keeps the first
// dataset.conversations and builds their text. With load.mode trace every conversation's first
// row needs a timestamp and start_ns is that timestamp relative to the earliest one kept; other
// modes leave start_ns 0. Errors: ConfigError "SOURCE:LINE: what is wrong".
std::vector<proto::Conversation> parse_mooncake_trace(std::istream& in, const std::string& source,
                                                      const Config& config,
                                                      const Corpus& corpus = Corpus::embedded(),
                                                      int64_t block_tokens = kMooncakeBlockTokens);

}  // namespace convoy::controller
