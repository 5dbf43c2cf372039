// dataset.type weka_trace: Weka's agentic coding traces (its KV-cache tester's trace replay format,
// as AIPerf's `--custom-dataset-type weka_trace` reads it; docs/datasets.md). A trace is one JSON
// object per file, one agent session: `id`, `block_size`, and `requests`, an ordered list of model
// calls (`type` "n" or "s": `t` seconds, `in` / `out` tokens, `hash_ids`, `api_time`) and
// sub-agent markers (`type` "subagent" with calls of their own). dataset.path is one such file or
// a folder of them (every *.json, by file name).
//
// Each trace is validated (errors: ConfigError "FILE: requests[3].in: what"; a trace is one JSON
// object, so a key path stands where a line would) and written as Mooncake rows into a temporary
// file (trace_rows.hpp): the session is a lead whose turns are its top-level calls, each
// sub-agent a member of its family spawned after the lead's call before its marker.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "controller/dataset/dataset.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// What the mapping did, for the log and for tests.
struct WekaTraceStats {
  uint64_t traces = 0;           // trace files mapped (one agent session each)
  uint64_t calls = 0;            // model calls written as rows (leads' and sub-agents')
  uint64_t subagents = 0;        // sub-agents replayed in their lead's family
  uint64_t early_subagents = 0;  // markers before the lead's first call: replayed as leads
  uint64_t empty_subagents = 0;  // markers without calls: skipped
  uint64_t not_extending = 0;    // later calls whose context did not extend the previous call's
  int64_t block_tokens = 0;      // the traces' common block_size in tokens (0: none mapped yet)
};

// Maps traces one at a time, checking what spans them: one block size, distinct ids.
class WekaTraceMapper {
 public:
  // Validates the trace `text` (the whole file named `source`) and writes its rows to `out`.
  void map(const std::string& text, const std::string& source, std::ostream& out);
  const WekaTraceStats& stats() const { return stats_; }

 private:
  WekaTraceStats stats_;
  std::string block_source_;                    // the file that set stats_.block_tokens
  std::map<std::string, std::string> session_;  // every session written -> its file
};

// The trace files dataset.path names: the file itself, or every *.json in the folder sorted by
// file name (ConfigError when there is none).
std::vector<std::string> weka_trace_files(const std::string& path);

// The dataset over the trace file or folder at `path` (through one temporary Mooncake file).
std::unique_ptr<Dataset> open_weka_trace(const std::string& path, const Config& config,
                                         const Corpus& corpus = Corpus::embedded());

// Every conversation of in-memory traces, each a (file name, text) pair (tests, small inputs).
std::vector<proto::Conversation> parse_weka_traces(
    const std::vector<std::pair<std::string, std::string>>& traces, const Config& config,
    const Corpus& corpus = Corpus::embedded());

// One line for the log: what `stats` mapped, skipped and counted.
std::string describe_weka_stats(const WekaTraceStats& stats);

}  // namespace convoy::controller
