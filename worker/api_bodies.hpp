// The conversation part of a request body for the Responses API (OpenAI) and the Messages API
// (Anthropic); RequestBuilder adds the model, the token limit and stream around it.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "worker/request_builder.hpp"

namespace convoy::worker {

// responses: "input" as input items {"role", "content"}: the system prompt (role system, when
// non-empty), the history, then this turn's user text (or its messages_json items, copied).
rapidjson::Value responses_input(const std::string& system_prompt,
                                 const std::vector<ChatMessage>& history,
                                 const std::string& user_text,
                                 const rapidjson::Value* turn_messages,
                                 rapidjson::Document::AllocatorType& a);

// responses: adds "input" (responses_input); with a `previous_response_id` the server holds
// the history: only this turn's input goes, with "previous_response_id".
void add_responses_conversation(rapidjson::Value& body, const std::string& system_prompt,
                                const std::vector<ChatMessage>& history,
                                const std::string& user_text, const rapidjson::Value* turn_messages,
                                const std::string& previous_response_id,
                                rapidjson::Document::AllocatorType& a);

// messages: adds "system" (the system prompt, then the text of any system-role messages_json
// items, joined by "\n"; absent when empty) and "messages" (history, then this turn's user text
// or its other messages_json items; the Messages API has no tool role: a tool message is sent
// as the user's).
void add_messages_conversation(rapidjson::Value& body, const std::string& system_prompt,
                               const std::vector<ChatMessage>& history,
                               const std::string& user_text, const rapidjson::Value* turn_messages,
                               rapidjson::Document::AllocatorType& a);

// The Messages API requires max_tokens: a turn without a limit sends this many.
inline constexpr int64_t kMessagesDefaultMaxTokens = 4096;

}  // namespace convoy::worker
