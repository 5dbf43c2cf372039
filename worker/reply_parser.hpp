// Extracts what the worker measures from OpenAI-compatible replies: streamed content, usage and
// errors from SSE data payloads, whole non-streaming bodies, and error bodies of failed requests.
// Pure functions over bytes (RapidJSON); no I/O, no clocks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/messages.hpp"

namespace convoy::worker {

// target.endpoint, as it arrives in the Welcome (typed: there is no name to parse).
using proto::Endpoint;

struct Usage {
  bool present = false;  // the reply carried a "usage" object
  // -1: not in this event (a messages stream reports input and output tokens in different
  // events; the last report of each wins).
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = -1;  // prompt_tokens_details.cached_tokens; -1: not reported
  // completion_tokens_details.reasoning_tokens (OpenAI's usage; part of completion_tokens);
  // -1: not reported.
  int64_t reasoning_tokens = -1;
};

struct ServerError {
  bool present = false;
  int64_t code = 0;     // numeric "code" when the server gave one
  std::string type;     // "type" (or a string "code" when there is no type)
  std::string message;  // "message", or the raw text trimmed to kMaxErrorMessageBytes
};

inline constexpr size_t kMaxErrorMessageBytes = 500;

// session_routing.verify: the worker that served a request, from the reply's nvext.worker_id,
// the object Dynamo adds when the request asked for nvext.extra_fields ["worker_id"]
// (ai-dynamo/dynamo lib/llm/src/protocols/openai/nvext.rs, WorkerIdInfo / NvExtResponse):
//   "nvext": {"worker_id": {"prefill_worker_id": u64, "prefill_dp_rank": u32,
//                           "decode_worker_id": u64, "decode_dp_rank": u32}}   (each optional)
// The decode worker is the one that holds the session (aggregated serving reports the same
// worker for both); without a decode id the prefill pair is used. An id is an unsigned integer,
// written in decimal (a non-empty string is taken as is); a rank is an integer >= 0.
struct ServedBy {
  bool present = false;  // a worker id was reported
  std::string worker;    // decode_worker_id, else prefill_worker_id
  int64_t dp_rank = -1;  // the same worker's DP rank; -1: not reported
};

// Reasoning models stream their thinking beside the content, in the chat delta (or message):
// `reasoning_content` (SGLang: sgl-project/sglang python/sglang/srt/entrypoints/openai/
// protocol.py, DeltaMessage and ChatMessage; older vLLM) or `reasoning` (newer vLLM:
// vllm-project/vllm vllm/entrypoints/openai/protocol.py DeltaMessage, and
// docs/features/reasoning_outputs.md: "`reasoning` used to be called `reasoning_content`").
// Both names are read; the first member of each name counts.
struct ReplyChunk {
  bool valid_json = false;  // false: the payload is not JSON (a malformed event or body)
  // Non-empty content or reasoning content in any choice: a token event for timing.
  bool has_content = false;
  // Non-empty non-reasoning content (chat content, completions text) in any choice: what
  // time_to_first_output_token waits for.
  bool has_output = false;
  // Non-empty reasoning_content or reasoning in any choice (chat only).
  bool has_reasoning = false;
  int64_t items = 0;  // embeddings: entries in data[]
  Usage usage;
  ServerError error;   // {"error": ...} or {"object": "error", ...}
  ServedBy served_by;  // nvext.worker_id (session_routing.verify)
  // nvext.timing (target.server_timing): the server's own timing of the request, on the chunk
  // with finish_reason (streamed) or the body. A field that is not a finite number >= 0 stays -1.
  proto::ServerTiming server_timing;
  // responses and messages: the event that ends the stream (response.completed, .incomplete,
  // .failed; message_stop), which those APIs send instead of chat's [DONE].
  bool stream_end = false;
  // responses: the response's id (response.created and friends, or a whole body's "id");
  // messages: message.id. Empty when the event has none.
  std::string response_id;
};

// One SSE `data:` payload of a streamed reply. Appends choice 0's content (chat:
// delta.content, completions: text; responses and messages: worker/api_events.hpp) to `text`;
// reasoning content counts as content for timing but is not appended.
ReplyChunk parse_stream_event(std::string_view data, Endpoint endpoint, std::string& text);

// The same through a full JSON document: the reference the fast path of parse_stream_event is
// tested against, and what it falls back to for error objects.
ReplyChunk parse_stream_event_document(std::string_view data, Endpoint endpoint, std::string& text);

// A whole non-streaming body (chat: choices[0].message.content, completions: choices[0].text,
// embeddings: data[]).
ReplyChunk parse_reply_body(std::string_view body, Endpoint endpoint, std::string& text);

// The body of a failed HTTP request, or the data of an `event: error`: OpenAI's
// {"error":{"message","type","code"}}, Dynamo's and vLLM's {"message","type","code"},
// FastAPI's {"detail": ...}; anything else becomes the trimmed raw text. `present` is true.
ServerError parse_error_body(std::string_view body);

// Whitespace-trimmed and cut to at most `max_bytes` on a UTF-8 character boundary.
std::string trim_message(std::string_view text, size_t max_bytes = kMaxErrorMessageBytes);

}  // namespace convoy::worker
