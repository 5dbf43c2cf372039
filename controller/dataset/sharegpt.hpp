// dataset.type sharegpt: the ShareGPT JSON that vLLM's `bench serve` and AIPerf read
// (docs/datasets.md "sharegpt"):
//
//   [{"id": "...", "conversations": [{"from": "system"|"human"|"gpt", "value": "..."}, ...]}, ...]
//
// Every human message followed by a gpt message is one turn: the user text is the human value,
// the gpt value is the recorded reply, and max_tokens is that reply's length in tokens (the
// tokenizer when one is set, else the estimate) unless dataset.output_tokens is set. Messages are
// paired as AIPerf 0.13.0 pairs them (its ShareGPTLoader): an unpaired human or gpt message (a
// conversation that starts with gpt, two humans in a row) is dropped, a pair with an empty value
// is dropped, and an element left with no pair is skipped; every one is counted (SharegptStats)
// and reported, never silently.
//
// The file is one JSON array, possibly far larger than memory: a SAX pass validates it element by
// element, keeping each element's byte range (16 bytes a conversation), and conversation(i)
// reads element i back by its range.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/exact_text.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// What the validating pass did with the file's messages; every count is over the whole file.
struct SharegptStats {
  uint64_t elements = 0;           // array elements read
  uint64_t conversations = 0;      // elements with at least one pair (before dataset.conversations)
  uint64_t turns = 0;              // human -> gpt pairs kept (after max_turns)
  uint64_t system_prompts = 0;     // a leading "system" message used as the system prompt
  uint64_t skipped = 0;            // elements with no usable pair
  int64_t first_skipped_line = 0;  // the line of the first skipped element; 0: none
  uint64_t unpaired = 0;           // human/gpt messages dropped for want of a partner
  uint64_t empty_pairs = 0;        // pairs dropped because a value was empty
  uint64_t other_roles = 0;        // messages ignored: from none of human, gpt or a leading system
  uint64_t cut_turns = 0;          // pairs beyond dataset.max_turns
  uint64_t positional = 0;         // elements with no human/gpt role: their first two values paired
};

// How a file dataset's conversations are handed out.
struct FileDatasetOptions {
  // Counts each recorded reply for max_tokens (sharegpt); null: the 4-bytes estimate.
  std::shared_ptr<const TokenCounter> counter;
  // Filled by the validating pass when not null.
  SharegptStats* stats = nullptr;
  // true: conversation(i) is the file's content only (ids as in the file, max_tokens and delays
  // left kUnsetMaxTokens / kUnsetDelayMs where the file has none, every recorded reply kept),
  // for `convoy dataset convert`; false: finished as every file dataset is for a run.
  bool raw = false;
};

// One line per nonzero count of `stats`, e.g. "from=gpt -> the reply's length is max_tokens: 1,234
// turns" (for convert's report and the run's log).
std::vector<std::string> describe_sharegpt_stats(const SharegptStats& stats, const Config& config);

// Validates all of `in` (the whole array; `source` names it in errors: ConfigError
// "SOURCE:LINE: key: what is wrong", LINE where the element starts) and keeps the byte range of
// each of the first dataset.conversations conversations; `text` (the same bytes) is read back.
std::unique_ptr<Dataset> index_sharegpt_text(std::istream& in, const std::string& source,
                                             std::string text, const Config& config,
                                             const FileDatasetOptions& options = {},
                                             const Corpus& corpus = Corpus::embedded());

// The same over the file at `path`, read back from the open file.
std::unique_ptr<Dataset> open_sharegpt_dataset(const std::string& path, const Config& config,
                                               const FileDatasetOptions& options = {},
                                               const Corpus& corpus = Corpus::embedded());

// Every conversation of an in-memory input (tests, small inputs).
std::vector<proto::Conversation> parse_sharegpt_dataset(std::istream& in, const std::string& source,
                                                        const Config& config,
                                                        const FileDatasetOptions& options = {},
                                                        const Corpus& corpus = Corpus::embedded());

}  // namespace convoy::controller
