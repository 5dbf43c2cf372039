// dataset.type dynamo_trace: the request trace NVIDIA Dynamo's frontend writes with request
// tracing on (DYN_REQUEST_TRACE=1 with the file sink: gzip-compressed JSONL segments, each line
// an envelope {"timestamp", "event": {record}} around a record of schema
// "dynamo.request.trace.v1"; bare records in plain files read too; docs/datasets.md). Each
// "request_end" record is one request: when the frontend received it, its input length and block
// hashes ("replay"), its output tokens and its agent session. Records of one session become the
// turns of one conversation (a later turn sends its new input: convoy sends the history), the gap
// between a request's end and the session's next request (a tool call, the agent thinking) its
// think time; a session with a parent in the trace is a sub-agent in the parent's family, spawned
// after the parent's last request that had ended when it began; with load.mode trace each lead
// starts at its first request's time.
//
// The records are mapped once, in a streaming pass, to Mooncake rows (hash ids of the trace's
// block size, and the sub-agent keys of trace_rows.hpp) in a temporary file, which the mooncake
// dataset then indexes and reads back: every Mooncake rule (load.trace, dataset.conversations,
// hash blocks) applies unchanged.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/corpus.hpp"
#include "controller/dataset/dataset.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// What the mapping did, for the log and for tests.
struct DynamoTraceStats {
  uint64_t requests = 0;           // request_end records mapped
  uint64_t sessions = 0;           // conversations they form
  uint64_t other_records = 0;      // tool_* and request_payload records (not requests)
  uint64_t child_sessions = 0;     // sessions with a parent_session_id
  uint64_t subagent_sessions = 0;  // of those, replayed as sub-agents in the parent's family
  uint64_t not_extending = 0;      // later requests whose context did not extend the previous
  int64_t block_tokens = 0;        // the trace's trace_block_size (0: no record had hashes)
};

// Validates `in` (errors: ConfigError "SOURCE:LINE: key: what") and writes the Mooncake rows it
// maps to into `out`, sessions in the order of their first request's receipt, each session's
// requests in the order they were received.
DynamoTraceStats map_dynamo_trace(std::istream& in, const std::string& source, std::ostream& out);

// The dataset over the trace at `path`: a file (gzip-compressed or plain) or a folder of
// segments (trace_rows.hpp's TraceText), through a temporary Mooncake file removed once open.
std::unique_ptr<Dataset> open_dynamo_trace(const std::string& path, const Config& config,
                                           const Corpus& corpus = Corpus::embedded());

// Every conversation of an in-memory trace (tests, small inputs).
std::vector<proto::Conversation> parse_dynamo_trace(std::istream& in, const std::string& source,
                                                    const Config& config,
                                                    const Corpus& corpus = Corpus::embedded());

}  // namespace convoy::controller
