// Agent traces mapped to Mooncake rows (dataset.type dynamo_trace and weka_trace). A trace
// format is read once, in a streaming pass, and written as Mooncake rows into a temporary file
// that the mooncake dataset then indexes and reads back by offset: load.trace,
// dataset.conversations, hash blocks and the wire-size checks apply as they do to a Mooncake file.
//
// Two of convoy's own row keys carry an agent's sub-agents (docs/datasets.md, "Sub-agents in a
// Mooncake file"): a session's first row may name `parent_session_id` (an earlier session of the
// file) and `spawn_after_turn` (1 .. the parent's turns): the session then runs as a sub-agent in
// its parent's family, on the parent's worker, started when that turn of the parent has ended,
// and the parent's next turn waits for it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "controller/dataset/dataset.hpp"

namespace convoy::controller {

// One Mooncake row as a trace mapping writes it.
struct TraceRow {
  std::string session;       // session_id
  bool first = false;        // the session's first row: time_ms is its timestamp, else its delay
  double time_ms = 0;        // ms: a lead's start (trace time) or a later row's think time, >= 0
  int64_t input_length = 0;  // tokens of the row's new input, >= 1
  std::vector<uint64_t> hash_ids;        // blocks of the trace's block size; empty: prose
  std::optional<int64_t> output_length;  // max_tokens (written as at least 1); unset: drawn
  std::string parent_session;            // first row of a sub-agent: its parent's session_id
  uint32_t spawn_after_turn = 0;         // with parent_session: 1 .. the parent's turns
};

// The row as one JSON line (with its '\n'). A sub-agent's first row carries no timestamp: it
// starts when its parent's turn does.
std::string mooncake_row_json(const TraceRow& row);

// An agent's request carries its whole context; convoy sends a session's history itself (the
// earlier turns and the replies) before each turn's new input. A call extending the previous one
// adds input - previous_input - previous_output tokens; a call that does not (the context was
// compacted or restarted) still adds at least 1.
struct NewInput {
  int64_t tokens = 1;   // the new input to send, >= 1
  bool extends = true;  // false: the context shrank, and 1 token stands for the call
};
NewInput new_input_tokens(int64_t input, int64_t previous_input, int64_t previous_output);

// A file removed when this goes out of scope (an open reader keeps its bytes readable).
class TempFile {
 public:
  explicit TempFile(const std::string& prefix);  // creates an empty file under the temp folder
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A trace as one plain text file. `path` may be a plain file, a gzip-compressed one (gzip's magic
// bytes, whatever its name: Dynamo's file sink writes trace.000000.jsonl.gz), or a folder: its
// *.jsonl and *.jsonl.gz files in name order, one after another, as the sink rolls them.
// Compressed or several files are decompressed into a temporary file. Throws ConfigError naming
// the file for a folder without such files, an unreadable file or corrupt gzip data.
class TraceText {
 public:
  explicit TraceText(const std::string& path);
  const std::string& plain_path() const;  // the text to read (`path` itself when plain)
  // A message "<path>:<line>: ..." about the plain text, with the line's own file and line when
  // the text joined several files (other messages unchanged).
  std::string locate(const std::string& message) const;

 private:
  struct Segment {
    std::string file;
    int64_t first_line = 1;  // of the plain text, 1-based
  };
  std::string path_;
  std::unique_ptr<TempFile> temp_;
  std::vector<Segment> segments_;
};

// Writes the rows `map` produces into a temporary file, indexes it as a Mooncake trace with
// blocks of block_tokens() tokens and removes the file (the dataset keeps it open). `map` writes
// to the stream and returns the trace's block size in tokens; errors it throws pass through.
// `source` names the trace in messages ("<source> (as Mooncake rows)" for the rows' own).
std::unique_ptr<Dataset> index_trace_rows(const std::string& source,
                                          const std::function<int64_t(std::ostream&)>& map,
                                          const Config& config, const Corpus& corpus);

}  // namespace convoy::controller
