// Errors as Dynamo's frontend returns them: HTTP status plus {"message","type","code"}.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace convoy::mock {

struct ApiError {
  ApiError() = default;
  ApiError(int status_code, std::string text, bool bare_body = false,
           std::string allow_methods = {})
      : status(status_code),
        message(std::move(text)),
        bare(bare_body),
        allow(std::move(allow_methods)) {}

  int status = 500;
  std::string message;
  // axum's own rejection rather than Dynamo's: `message` is the whole body, text/plain (an
  // empty one for 404 and 405), as the legacy era's frontend (1.2.x) sends them.
  bool bare = false;
  std::string allow;  // 405: the Allow header ("POST", "GET,HEAD")
  // On POST /v1/messages: rendered as the Messages API's {"type":"error","error":{"type",
  // "message"}} (Dynamo 1.6.1 answers that route's errors so), the type from the status.
  bool anthropic = false;
};

// The reason phrase Dynamo puts in "type" (e.g. 400 -> "Bad Request").
std::string_view status_type(int status);
// {"message":..., "type":..., "code":...}, or the Messages API's shape when error.anthropic.
std::string error_body(const ApiError& error);
// {"type":"error","error":{"type": invalid_request_error | not_found_error | ..., "message"}}
std::string anthropic_error_body(const ApiError& error);

// The prefix of Dynamo's 400 for a body serde cannot read into its request type.
inline constexpr std::string_view kDeserializePrefix =
    "Failed to deserialize the JSON body into the target type: ";

inline ApiError bad_request(std::string message) { return {400, std::move(message)}; }
inline ApiError not_found(std::string message) { return {404, std::move(message)}; }
inline ApiError internal_error(std::string message) { return {500, std::move(message)}; }

// The router's answer for a path it does not serve (both eras measured against the real
// frontends): 1.6.x {"message":"Route not found: POST /tokenize",...}; 1.2.x an empty 404.
ApiError route_not_found(bool legacy_era, std::string_view method, std::string_view path);
// A known path with the wrong method: an empty 405 with Allow, in both eras.
ApiError method_not_allowed(std::string allow);

}  // namespace convoy::mock
