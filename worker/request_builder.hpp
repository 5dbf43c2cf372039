// Request bodies for the chat, completions and embeddings endpoints, and the one place where a
// formatted body is serialized with the session-routing overlay (one place, so that every
// endpoint type gets the same overlay).
//
// Formatting never touches the stored turn or the shared extra_body; the overlay is applied to
// the serialized output only, so the formatted body can be kept, logged or re-sent unchanged.
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/messages.hpp"
#include "worker/session_routing.hpp"

namespace convoy::worker {

struct ChatMessage {
  std::string role;  // system | user | assistant | tool
  std::string content;
};

// Bad request input: extra_body_json or a turn's extra_json that is not a JSON object, a turn's
// messages_json that is not an array of messages with a valid role.
class RequestFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Formats bodies for one run's settings. Parses and validates extra_body_json once (throws
// RequestFormatError from the constructor), so per-request formatting only parses the turn.
class RequestBuilder {
 public:
  explicit RequestBuilder(const proto::WorkerSettings& settings);

  // See format_body below. Throws RequestFormatError for a bad turn.
  rapidjson::Document format(const std::string& system_prompt,
                             const std::vector<ChatMessage>& history,
                             const proto::Turn& turn) const;
  // The same without exceptions: on failure returns false and sets *error (body untouched).
  // The body is built with body->GetAllocator() (RequestBodyArena's, in the runner).
  // `previous_response_id` (responses with target.responses_state server, turn 2+): the input
  // is this turn's only, chained to that response.
  bool try_format(const std::string& system_prompt, const std::vector<ChatMessage>& history,
                  const proto::Turn& turn, rapidjson::Document* body, std::string* error,
                  const std::string& previous_response_id = {}) const;

 private:
  // The token limit (max_tokens / max_completion_tokens / max_output_tokens, as the endpoint
  // names it), "stream" and chat's and completions' stream_options. Not for embeddings.
  void add_generation_options(rapidjson::Value& body, int64_t max_tokens,
                              rapidjson::Document::AllocatorType& a) const;

  proto::Endpoint endpoint_;
  std::string model_;
  bool streaming_;
  bool include_usage_;
  bool max_completion_tokens_;
  bool verify_;                     // session_routing.verify: ask for nvext.extra_fields worker_id
  bool server_timing_;              // target.server_timing: ask for nvext.extra_fields timing
  rapidjson::Document extra_body_;  // an object; merged into every body
};

// The body of one turn:
//   chat:        {"model", "messages": [system (when non-empty)] + history + this turn's user
//                message (or the turn's messages_json array, appended after history),
//                "max_tokens" | "max_completion_tokens" (when turn.max_tokens > 0), "stream",
//                "stream_options": {"include_usage": true} (streaming + server token counts)}
//   completions: {"model", "prompt": system, history and the user text (or the contents of
//                messages_json) joined with "\n", "max_tokens", "stream", "stream_options"};
//                max_completion_tokens does not apply: the completions API only has max_tokens.
//   embeddings:  {"model", "input": the user text}; no stream, no token limit.
//   responses:   {"model", "input": input items (worker/api_bodies.hpp), "max_output_tokens",
//                "stream"} (+ "previous_response_id" with only this turn's input, when given).
//   messages:    {"model", "system", "messages" (api_bodies.hpp), "max_tokens" (always: the
//                API requires it), "stream"}.
// Then target.extra_body, then the turn's extra_json are merged in (later wins; objects merge
// recursively, anything else replaces). Last, with session_routing.verify, "worker_id" and
// "timing" are added to nvext.extra_fields, and "timing" with target.server_timing (kept with
// whatever else the merged body asks there; a non-array extra_fields is replaced), so Dynamo
// reports the serving worker and its own timing of the request in the reply's nvext.
// Throws RequestFormatError.
rapidjson::Document format_body(const proto::WorkerSettings& s, const std::string& system_prompt,
                                const std::vector<ChatMessage>& history, const proto::Turn& turn);

// Validates a messages_json array: every element an object whose "role" is system, user,
// assistant or tool. Returns "" when valid, else a message naming the element.
std::string validate_messages_json(const rapidjson::Value& messages);

// Merges `src` into `dst`: for each member of src, objects merge recursively, anything else
// replaces dst's value (src wins). Both must be objects.
void merge_json_object(rapidjson::Value& dst, const rapidjson::Value& src,
                       rapidjson::Document::AllocatorType& allocator);

// THE one place where a formatted body becomes bytes. Writes `body` with the overlay's
// session_control placed under nvext.session_control, without copying or changing `body`:
// other nvext keys and other session_control keys are kept, the computed fields win. A body
// that is not a JSON object is written without the overlay and *warning is set (on every such
// call; the caller logs it once). When `session_control_as_sent` is given it receives the
// merged session_control object as written (present() false when none), for records.
std::string serialize_request(const rapidjson::Value& body, const SessionOverlay& overlay,
                              std::string* warning,
                              SessionControl* session_control_as_sent = nullptr);

// Request bodies without a heap allocation per request but the bytes' own (at tens of thousands
// of requests per second, allocation was a visible cost): a
// Document and its writer, each with their own allocations (a pool object, a 64 KiB chunk, a
// string buffer, a stack), were made and freed for every request. Here the document lives in
// one arena reused from request to request (grown once to the largest body seen, up to 4 MiB;
// beyond it rapidjson takes chunks from the heap as it always did), and the writer and its
// buffer are kept. One per ConversationRunner: not thread-safe.
class RequestBodyArena {
 public:
  RequestBodyArena();
  ~RequestBodyArena();
  RequestBodyArena(const RequestBodyArena&) = delete;
  RequestBodyArena& operator=(const RequestBodyArena&) = delete;

  // An empty document on the arena, for RequestBuilder::try_format. The previous document (and
  // anything allocated with it) is gone.
  rapidjson::Document& fresh_document();
  // serialize_request() through the kept writer: the same bytes.
  std::string serialize(const rapidjson::Value& body, const SessionOverlay& overlay,
                        std::string* warning, SessionControl* session_control_as_sent = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::worker
