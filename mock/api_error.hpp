// Errors as Dynamo's frontend returns them: HTTP status plus {"message","type","code"}.
#pragma once

#include <string>
#include <string_view>

namespace convoy::mock {

struct ApiError {
  int status = 500;
  std::string message;
};

// The reason phrase Dynamo puts in "type" (e.g. 400 -> "Bad Request").
std::string_view status_type(int status);
// {"message":..., "type":..., "code":...}
std::string error_body(const ApiError& error);

// The prefix of Dynamo's 400 for a body serde cannot read into its request type.
inline constexpr std::string_view kDeserializePrefix =
    "Failed to deserialize the JSON body into the target type: ";

inline ApiError bad_request(std::string message) { return {400, std::move(message)}; }
inline ApiError not_found(std::string message) { return {404, std::move(message)}; }
inline ApiError internal_error(std::string message) { return {500, std::move(message)}; }

}  // namespace convoy::mock
