// OpenAI request bodies -> what the simulated engine needs (prompt bytes, output length, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <rapidjson/document.h>

#include "mock/api_error.hpp"
#include "mock/contract.hpp"
#include "mock/options.hpp"
#include "proto/messages.hpp"

namespace convoy::mock {

// The endpoint a request came in on: the one definition convoy has (proto/messages.hpp), named
// by proto::to_string.
using proto::Endpoint;

struct ApiRequest {
  Endpoint endpoint = Endpoint::kChat;
  std::string model;  // one of the served models (--model)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int64_t max_tokens = 0;      // output tokens to generate (0 for embeddings)
  std::string prompt;          // flattened prompt bytes; tokens = ceil(bytes / 4)
  int64_t prompt_tokens = 0;
  int64_t inputs = 1;      // embeddings: number of inputs
  int64_t user_turns = 0;  // chat: user messages, the turn-index fallback without a session key
  bool want_worker_id = false;  // nvext.extra_fields contains "worker_id"
  bool want_timing = false;     // nvext.extra_fields contains "timing"
  // An explicit worker pin: nvext.backend_instance_id and nvext.dp_rank.
  std::optional<uint64_t> backend_instance_id;
  std::optional<uint32_t> dp_rank;
  // nvext.agent_hints.priority (higher = more important, as Dynamo's router orders its queue);
  // 0 when absent.
  int64_t priority = 0;
  std::string session_id;  // SGLang's body session_id ("" when none)
  SessionDirective session;
  // responses: the request's previous_response_id ("" when none); the caller prepends the
  // history it names.
  std::string previous_response_id;
};

// Validates and reads a parsed body. The model must be a served one (404 otherwise, as
// Dynamo answers); max_completion_tokens wins over max_tokens. responses: "input" (a string or
// input items with role and content) and max_output_tokens; messages: "messages", "system"
// (a string or text blocks) and max_tokens, which that API requires (a 400 without it).
// `raw_body` is what `body` was parsed from (serde's error positions).
std::variant<ApiRequest, ApiError> read_api_request(Endpoint endpoint, const rapidjson::Value& body,
                                                    std::string_view raw_body,
                                                    const Options& options);

// The JSON syntax error Dynamo's frontend returns for a body that does not parse, as the header
// era (`legacy_era` false) or the legacy era renders it.
ApiError json_syntax_error(const rapidjson::Document& doc, std::string_view raw_body,
                           bool legacy_era);

}  // namespace convoy::mock
