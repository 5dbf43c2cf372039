// POST /tokenize as vLLM serves it (vllm/entrypoints/openai: TokenizeCompletionRequest
// {"model", "prompt", "add_special_tokens"} and TokenizeChatRequest {"model", "messages",
// "add_generation_prompt"} -> TokenizeResponse {"count", "max_model_len", "tokens"}), counted by
// the mock's own tokenizer (tokens.hpp): a chat form counts the flattened template, exactly as
// the mock's usage.prompt_tokens does for the same messages. --no-tokenize drops the route
// (404), as Dynamo 1.6.1's frontend has none.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include <rapidjson/document.h>

#include "mock/api_error.hpp"
#include "mock/options.hpp"

namespace convoy::mock {

// The mock's stated context length, reported as max_model_len.
inline constexpr int64_t kMockMaxModelLen = 131072;

// The reply body for a parsed request body, or the error Dynamo-style routes give (400 for a
// body without "prompt" or "messages", 404 for another model).
std::variant<std::string, ApiError> tokenize_reply(const rapidjson::Value& body,
                                                   std::string_view raw_body,
                                                   const Options& options);

}  // namespace convoy::mock
