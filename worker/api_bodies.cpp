#include "worker/api_bodies.hpp"

#include <string_view>

namespace convoy::worker {

namespace {

using rapidjson::SizeType;
using rapidjson::Value;
using BodyAllocator = rapidjson::Document::AllocatorType;

Value text_value(std::string_view text, BodyAllocator& a) {
  return Value(text.data(), static_cast<SizeType>(text.size()), a);
}

Value role_message(std::string_view role, std::string_view content, BodyAllocator& a) {
  Value m(rapidjson::kObjectType);
  m.AddMember("role", text_value(role, a), a);
  m.AddMember("content", text_value(content, a), a);
  return m;
}

std::string_view role_of(const Value& m) {
  auto it = m.FindMember("role");
  if (it == m.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

// A string content, or the "text" parts of a content-part array, joined.
std::string content_text(const Value& m) {
  auto it = m.FindMember("content");
  if (it == m.MemberEnd()) return {};
  const Value& content = it->value;
  if (content.IsString()) return {content.GetString(), content.GetStringLength()};
  std::string out;
  if (!content.IsArray()) return out;
  for (const auto& part : content.GetArray()) {
    if (!part.IsObject()) continue;
    auto text = part.FindMember("text");
    if (text != part.MemberEnd() && text->value.IsString()) {
      out.append(text->value.GetString(), text->value.GetStringLength());
    }
  }
  return out;
}

}  // namespace

Value responses_input(const std::string& system_prompt, const std::vector<ChatMessage>& history,
                      const std::string& user_text, const Value* turn_messages, BodyAllocator& a) {
  Value input(rapidjson::kArrayType);
  input.Reserve(static_cast<SizeType>(history.size() + 2), a);
  if (!system_prompt.empty()) input.PushBack(role_message("system", system_prompt, a), a);
  for (const auto& m : history) input.PushBack(role_message(m.role, m.content, a), a);
  if (turn_messages == nullptr) {
    input.PushBack(role_message("user", user_text, a), a);
    return input;
  }
  for (const auto& m : turn_messages->GetArray()) input.PushBack(Value(m, a), a);
  return input;
}

void add_responses_conversation(Value& body, const std::string& system_prompt,
                                const std::vector<ChatMessage>& history,
                                const std::string& user_text, const Value* turn_messages,
                                const std::string& previous_response_id, BodyAllocator& a) {
  if (previous_response_id.empty()) {
    body.AddMember("input", responses_input(system_prompt, history, user_text, turn_messages, a),
                   a);
    return;
  }
  body.AddMember("input", responses_input("", {}, user_text, turn_messages, a), a);
  body.AddMember("previous_response_id", text_value(previous_response_id, a), a);
}

void add_messages_conversation(Value& body, const std::string& system_prompt,
                               const std::vector<ChatMessage>& history,
                               const std::string& user_text, const Value* turn_messages,
                               BodyAllocator& a) {
  std::string system = system_prompt;
  Value list(rapidjson::kArrayType);
  list.Reserve(static_cast<SizeType>(history.size() + 1), a);
  auto add = [&](std::string_view role, std::string_view content) {
    if (role == "system") {
      if (!system.empty() && !content.empty()) system.push_back('\n');
      system.append(content);
      return;
    }
    list.PushBack(role_message(role == "assistant" ? "assistant" : "user", content, a), a);
  };
  for (const auto& m : history) add(m.role, m.content);
  if (turn_messages == nullptr) {
    add("user", user_text);
  } else {
    for (const auto& m : turn_messages->GetArray()) add(role_of(m), content_text(m));
  }
  if (!system.empty()) body.AddMember("system", text_value(system, a), a);
  body.AddMember("messages", std::move(list), a);
}

}  // namespace convoy::worker
