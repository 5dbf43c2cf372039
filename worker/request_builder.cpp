#include "worker/request_builder.hpp"

#include "worker/api_bodies.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

namespace convoy::worker {

namespace {

using JsonDocument = rapidjson::Document;
using rapidjson::SizeType;
using rapidjson::Value;
using Allocator = JsonDocument::AllocatorType;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

Value string_value(std::string_view text, Allocator& a) {
  return Value(text.data(), static_cast<SizeType>(text.size()), a);
}

std::string_view view(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

const char* type_name(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "a boolean";
    case rapidjson::kObjectType:
      return "an object";
    case rapidjson::kArrayType:
      return "an array";
    case rapidjson::kStringType:
      return "a string";
    case rapidjson::kNumberType:
      return "a number";
  }
  return "unknown";
}

// Parses `text` with `a` as allocator, so the result can be moved into a body that uses `a`.
// Returns "" on success, else the parse error.
std::string parse_into(const std::string& text, Allocator& a, Value* out) {
  JsonDocument doc(&a);
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return std::string(rapidjson::GetParseError_En(doc.GetParseError())) + " at offset " +
           std::to_string(doc.GetErrorOffset());
  }
  *out = std::move(static_cast<Value&>(doc));
  return "";
}

Value message(std::string_view role, std::string_view content, Allocator& a) {
  Value m(rapidjson::kObjectType);
  m.AddMember("role", string_value(role, a), a);
  m.AddMember("content", string_value(content, a), a);
  return m;
}

// The text of a message's content: a string, or the "text" parts of a content-part array.
void append_content_text(const Value& content, std::string* out) {
  if (content.IsString()) {
    out->append(view(content));
    return;
  }
  if (!content.IsArray()) return;
  for (const auto& part : content.GetArray()) {
    if (!part.IsObject()) continue;
    auto text = part.FindMember("text");
    if (text != part.MemberEnd() && text->value.IsString()) out->append(view(text->value));
  }
}

void append_line(std::string_view text, std::string* out) {
  if (text.empty()) return;
  if (!out->empty()) out->push_back('\n');
  out->append(text);
}

// completions: system, history and the new text (or messages) as one plain-text prompt. Each
// turn's prompt starts with the previous turn's prompt, so prefix caching sees the shared part.
std::string flatten_prompt(const std::string& system_prompt,
                           const std::vector<ChatMessage>& history, const std::string& user_text,
                           const Value* messages) {
  std::string prompt;
  append_line(system_prompt, &prompt);
  for (const auto& m : history) append_line(m.content, &prompt);
  if (messages == nullptr) {
    append_line(user_text, &prompt);
    return prompt;
  }
  for (const auto& m : messages->GetArray()) {
    auto content = m.FindMember("content");
    if (content == m.MemberEnd()) continue;
    std::string text;
    append_content_text(content->value, &text);
    append_line(text, &prompt);
  }
  return prompt;
}

void write_key(JsonWriter& w, const Value& name) {
  w.Key(name.GetString(), name.GetStringLength());
}

// nvext with the overlay's session_control merged in. convoy owns session_id, action and
// timeout: they are set as computed, or removed when this request does not carry them (a close
// has no timeout, a bare legacy request has neither). Every other key is kept.
JsonDocument merged_nvext(const Value* existing, const SessionControl& control) {
  JsonDocument nvext;
  if (existing != nullptr && existing->IsObject()) {
    nvext.CopyFrom(*existing, nvext.GetAllocator());
  } else {
    nvext.SetObject();
  }
  Allocator& a = nvext.GetAllocator();
  auto sc = nvext.FindMember("session_control");
  if (sc == nvext.MemberEnd()) {
    nvext.AddMember("session_control", Value(rapidjson::kObjectType), a);
    sc = nvext.FindMember("session_control");
  } else if (!sc->value.IsObject()) {
    sc->value.SetObject();
  }
  Value& obj = sc->value;
  auto set = [&](const char* key, Value v) {
    auto it = obj.FindMember(key);
    if (it != obj.MemberEnd()) {
      it->value = std::move(v);
    } else {
      obj.AddMember(Value(rapidjson::StringRef(key)), std::move(v), a);
    }
  };
  set("session_id", string_value(control.session_id, a));
  if (control.action == proto::SessionAction::kBare) {
    obj.EraseMember("action");
  } else {
    set("action", string_value(proto::to_string(control.action), a));
  }
  if (control.timeout_s > 0) {
    set("timeout", Value(control.timeout_s));
  } else {
    obj.EraseMember("timeout");
  }
  return nvext;
}

// nvext.extra_fields gets `field` (once), beside whatever the body already asks for there:
// "worker_id" (session_routing.verify) and "timing" (target.server_timing, or verify). Dynamo
// answers with nvext.worker_id / nvext.timing in the reply (see reply_parser).
void ask_for_extra_field(Value& body, const char* field, Allocator& a) {
  auto nvext = body.FindMember("nvext");
  if (nvext == body.MemberEnd()) {
    body.AddMember("nvext", Value(rapidjson::kObjectType), a);
    nvext = body.FindMember("nvext");
  } else if (!nvext->value.IsObject()) {
    nvext->value.SetObject();
  }
  Value& ext = nvext->value;
  auto fields = ext.FindMember("extra_fields");
  if (fields == ext.MemberEnd()) {
    ext.AddMember("extra_fields", Value(rapidjson::kArrayType), a);
    fields = ext.FindMember("extra_fields");
  } else if (!fields->value.IsArray()) {
    fields->value.SetArray();
  }
  for (const auto& f : fields->value.GetArray()) {
    if (f.IsString() && view(f) == field) return;
  }
  fields->value.PushBack(Value(field, a), a);
}

std::string to_string(const Value& v) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  v.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

std::string validate_messages_json(const Value& messages) {
  if (!messages.IsArray())
    return std::string("messages_json must be an array, got ") + type_name(messages);
  SizeType i = 0;
  for (const auto& m : messages.GetArray()) {
    const std::string where = "messages_json[" + std::to_string(i++) + "]";
    if (!m.IsObject()) return where + " must be an object, got " + type_name(m);
    auto role = m.FindMember("role");
    if (role == m.MemberEnd()) return where + " has no \"role\"";
    if (!role->value.IsString())
      return where + ".role must be a string, got " + type_name(role->value);
    std::string_view r = view(role->value);
    if (r != "system" && r != "user" && r != "assistant" && r != "tool") {
      return where + ".role is \"" + std::string(r) +
             "\"; expected system, user, assistant or tool";
    }
  }
  return "";
}

void merge_json_object(Value& dst, const Value& src, Allocator& allocator) {
  for (const auto& member : src.GetObject()) {
    auto it = dst.FindMember(member.name);
    if (it == dst.MemberEnd()) {
      dst.AddMember(Value(member.name, allocator), Value(member.value, allocator), allocator);
    } else if (it->value.IsObject() && member.value.IsObject()) {
      merge_json_object(it->value, member.value, allocator);
    } else {
      it->value.CopyFrom(member.value, allocator);
    }
  }
}

RequestBuilder::RequestBuilder(const proto::WorkerSettings& settings)
    : endpoint_(settings.endpoint),
      model_(settings.model),
      streaming_(settings.streaming),
      include_usage_(settings.use_server_token_counts),
      max_completion_tokens_(settings.max_completion_tokens),
      verify_(settings.session_routing.verify),
      server_timing_(settings.server_timing) {
  const std::string& extra = settings.extra_body_json.empty() ? "{}" : settings.extra_body_json;
  extra_body_.Parse(extra.data(), extra.size());
  if (extra_body_.HasParseError()) {
    throw RequestFormatError(std::string("target.extra_body is not valid JSON: ") +
                             rapidjson::GetParseError_En(extra_body_.GetParseError()) +
                             " at offset " + std::to_string(extra_body_.GetErrorOffset()));
  }
  if (!extra_body_.IsObject()) {
    throw RequestFormatError(std::string("target.extra_body must be a JSON object, got ") +
                             type_name(extra_body_));
  }
}

bool RequestBuilder::try_format(const std::string& system_prompt,
                                const std::vector<ChatMessage>& history, const proto::Turn& turn,
                                JsonDocument* out, std::string* error,
                                const std::string& previous_response_id) const {
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return false;
  };
  // Everything is allocated from the caller's document (a runner's reused arena: no heap
  // allocation per request).
  Allocator& a = out->GetAllocator();
  Value body(rapidjson::kObjectType);

  Value messages;  // the turn's messages_json, parsed and validated
  if (!turn.messages_json.empty()) {
    std::string parse_error = parse_into(turn.messages_json, a, &messages);
    if (!parse_error.empty()) return fail("turn messages_json is not valid JSON: " + parse_error);
    std::string invalid = validate_messages_json(messages);
    if (!invalid.empty()) return fail("turn " + invalid);
  }
  Value turn_extra;
  if (!turn.extra_json.empty()) {
    std::string parse_error = parse_into(turn.extra_json, a, &turn_extra);
    if (!parse_error.empty()) return fail("turn extra_json is not valid JSON: " + parse_error);
    if (!turn_extra.IsObject()) {
      return fail(std::string("turn extra_json must be a JSON object, got ") +
                  type_name(turn_extra));
    }
  }
  const Value* turn_messages = messages.IsArray() ? &messages : nullptr;

  body.AddMember("model", string_value(model_, a), a);
  switch (endpoint_) {
    case proto::Endpoint::kChat: {
      Value list(rapidjson::kArrayType);
      list.Reserve(static_cast<SizeType>(history.size() + 2), a);
      if (!system_prompt.empty()) list.PushBack(message("system", system_prompt, a), a);
      for (const auto& m : history) list.PushBack(message(m.role, m.content, a), a);
      if (turn_messages != nullptr) {
        for (auto& m : messages.GetArray()) list.PushBack(std::move(m), a);
      } else {
        list.PushBack(message("user", turn.user_text, a), a);
      }
      body.AddMember("messages", std::move(list), a);
      break;
    }
    case proto::Endpoint::kCompletions:
      body.AddMember(
          "prompt",
          string_value(flatten_prompt(system_prompt, history, turn.user_text, turn_messages), a),
          a);
      break;
    case proto::Endpoint::kEmbeddings: {
      std::string input = turn.user_text;
      if (input.empty() && turn_messages != nullptr) {
        input = flatten_prompt("", {}, "", turn_messages);
      }
      body.AddMember("input", string_value(input, a), a);
      break;
    }
    case proto::Endpoint::kResponses:
      add_responses_conversation(body, system_prompt, history, turn.user_text, turn_messages,
                                 previous_response_id, a);
      break;
    case proto::Endpoint::kMessages:
      add_messages_conversation(body, system_prompt, history, turn.user_text, turn_messages, a);
      break;
  }
  if (endpoint_ != proto::Endpoint::kEmbeddings) add_generation_options(body, turn.max_tokens, a);
  merge_json_object(body, extra_body_, a);
  if (turn_extra.IsObject()) merge_json_object(body, turn_extra, a);
  if (verify_) ask_for_extra_field(body, "worker_id", a);
  if (verify_ || server_timing_) ask_for_extra_field(body, "timing", a);
  static_cast<Value&>(*out) = body;  // rapidjson's assignment moves
  return true;
}

void RequestBuilder::add_generation_options(Value& body, int64_t max_tokens, Allocator& a) const {
  if (endpoint_ == proto::Endpoint::kMessages) {  // required there
    body.AddMember("max_tokens", Value(max_tokens > 0 ? max_tokens : kMessagesDefaultMaxTokens), a);
  } else if (max_tokens > 0) {
    const char* key = endpoint_ == proto::Endpoint::kResponses ? "max_output_tokens"
                      : endpoint_ == proto::Endpoint::kChat && max_completion_tokens_
                          ? "max_completion_tokens"
                          : "max_tokens";
    body.AddMember(rapidjson::StringRef(key), Value(max_tokens), a);
  }
  body.AddMember("stream", Value(streaming_), a);
  // Responses and Messages always report usage; neither has stream_options.
  const bool openai_stream =
      endpoint_ == proto::Endpoint::kChat || endpoint_ == proto::Endpoint::kCompletions;
  if (streaming_ && include_usage_ && openai_stream) {
    Value options(rapidjson::kObjectType);
    options.AddMember("include_usage", Value(true), a);
    body.AddMember("stream_options", std::move(options), a);
  }
}

JsonDocument RequestBuilder::format(const std::string& system_prompt,
                                    const std::vector<ChatMessage>& history,
                                    const proto::Turn& turn) const {
  JsonDocument body;
  std::string error;
  if (!try_format(system_prompt, history, turn, &body, &error)) throw RequestFormatError(error);
  return body;
}

JsonDocument format_body(const proto::WorkerSettings& s, const std::string& system_prompt,
                         const std::vector<ChatMessage>& history, const proto::Turn& turn) {
  return RequestBuilder(s).format(system_prompt, history, turn);
}

namespace {

// The keys of a merged session_control object that convoy does not own (the body's own, from
// target.extra_body), as (key, value's JSON text), in the order sent.
std::vector<std::pair<std::string, std::string>> other_session_keys(const Value& control) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& member : control.GetObject()) {
    const std::string_view key = view(member.name);
    if (key == "session_id" || key == "action" || key == "timeout") continue;
    out.emplace_back(std::string(key), to_string(member.value));
  }
  return out;
}

// serialize_request() through a given writer (a fresh one, or RequestBodyArena's kept one).
void write_request(JsonWriter& w, const Value& body, const SessionOverlay& overlay,
                   std::string* warning, SessionControl* session_control_as_sent) {
  if (session_control_as_sent) *session_control_as_sent = SessionControl{};
  if (!overlay.session_control) {
    body.Accept(w);
    return;
  }
  if (!body.IsObject()) {
    if (warning) {
      *warning = std::string("request body is ") + type_name(body) +
                 ", not a JSON object: session routing (nvext.session_control) was not applied";
    }
    body.Accept(w);
    return;
  }
  SessionControl sent = *overlay.session_control;
  auto write_nvext = [&](const Value* existing) {
    JsonDocument nvext = merged_nvext(existing, *overlay.session_control);
    nvext.Accept(w);
    if (session_control_as_sent) sent.other_keys = other_session_keys(nvext["session_control"]);
  };
  bool wrote_nvext = false;
  w.StartObject();
  for (const auto& member : body.GetObject()) {
    write_key(w, member.name);
    if (view(member.name) == "nvext") {
      write_nvext(&member.value);
      wrote_nvext = true;
    } else {
      member.value.Accept(w);
    }
  }
  if (!wrote_nvext) {
    w.Key("nvext");
    write_nvext(nullptr);
  }
  w.EndObject();
  if (session_control_as_sent) *session_control_as_sent = std::move(sent);
}

}  // namespace

std::string serialize_request(const Value& body, const SessionOverlay& overlay,
                              std::string* warning, SessionControl* session_control_as_sent) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  write_request(w, body, overlay, warning, session_control_as_sent);
  return std::string(buffer.GetString(), buffer.GetSize());
}

struct RequestBodyArena::Impl {
  static constexpr size_t kFirstBytes = 16u << 10;
  static constexpr size_t kMaxBytes = 4u << 20;  // a larger body spills into heap chunks
  std::vector<char> buffer = std::vector<char>(kFirstBytes);
  std::optional<rapidjson::MemoryPoolAllocator<>> pool;
  std::optional<JsonDocument> document;  // on `pool`
  rapidjson::StringBuffer out;
  JsonWriter writer{out};

  Impl() { bind(); }
  void bind() {
    pool.emplace(buffer.data(), buffer.size());
    document.emplace(&*pool);
  }
};

RequestBodyArena::RequestBodyArena() : impl_(std::make_unique<Impl>()) {}
RequestBodyArena::~RequestBodyArena() = default;

JsonDocument& RequestBodyArena::fresh_document() {
  Impl& s = *impl_;
  const size_t used = s.pool->Size();
  if (used > s.buffer.size() && s.buffer.size() < Impl::kMaxBytes) {
    // The last body spilled out of the arena: grow it so that the next one fits in one piece.
    s.document.reset();
    s.pool.reset();
    s.buffer = std::vector<char>(std::min(2 * used, Impl::kMaxBytes));
    s.bind();
  } else {
    s.document->SetNull();
    s.pool->Clear();  // frees spilled chunks; the arena itself is kept
  }
  return *s.document;
}

std::string RequestBodyArena::serialize(const Value& body, const SessionOverlay& overlay,
                                        std::string* warning,
                                        SessionControl* session_control_as_sent) {
  Impl& s = *impl_;
  s.out.Clear();
  s.writer.Reset(s.out);
  write_request(s.writer, body, overlay, warning, session_control_as_sent);
  std::string bytes(s.out.GetString(), s.out.GetSize());
  if (s.out.GetSize() > Impl::kMaxBytes) {
    s.out.Clear();
    s.out.ShrinkToFit();
  }
  return bytes;
}

}  // namespace convoy::worker
