#include "worker/api_events.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>

namespace convoy::worker {

namespace {

using JsonValue = rapidjson::Value;

const JsonValue* field(const JsonValue* object, const char* name) {
  if (object == nullptr || !object->IsObject()) return nullptr;
  auto it = object->FindMember(name);
  return it == object->MemberEnd() ? nullptr : &it->value;
}

std::string_view text_of(const JsonValue* value) {
  if (value == nullptr || !value->IsString()) return {};
  return {value->GetString(), value->GetStringLength()};
}

// A token count: a non-negative integer that fits int64, else `fallback`.
int64_t count_of(const JsonValue* value, int64_t fallback) {
  if (value == nullptr || !value->IsInt64() || value->GetInt64() < 0) return fallback;
  return value->GetInt64();
}

std::string json_text(const JsonValue& value) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  value.Accept(writer);
  return {out.GetString(), out.GetSize()};
}

// {"message", "type", "code"} (a Responses error) or {"type", "message"} (an Anthropic one).
ServerError api_error_of(const JsonValue& e) {
  ServerError error;
  error.present = true;
  if (!e.IsObject()) {
    error.message = trim_message(e.IsString() ? text_of(&e) : json_text(e));
    return error;
  }
  error.message = trim_message(text_of(field(&e, "message")));
  error.type = std::string(text_of(field(&e, "type")));
  const JsonValue* code = field(&e, "code");
  if (code != nullptr && code->IsInt64()) error.code = code->GetInt64();
  if (error.type.empty() || error.type == "error") {
    if (!text_of(code).empty()) error.type = std::string(text_of(code));
  }
  if (error.message.empty()) error.message = trim_message(json_text(e));
  return error;
}

// A Responses usage object: input_tokens (cached included), output_tokens (reasoning included).
Usage responses_usage(const JsonValue* u) {
  Usage usage;
  if (u == nullptr || !u->IsObject()) return usage;
  usage.present = true;
  usage.prompt_tokens = count_of(field(u, "input_tokens"), 0);
  usage.completion_tokens = count_of(field(u, "output_tokens"), 0);
  usage.cached_tokens = count_of(field(field(u, "input_tokens_details"), "cached_tokens"), -1);
  usage.reasoning_tokens =
      count_of(field(field(u, "output_tokens_details"), "reasoning_tokens"), -1);
  return usage;
}

// An Anthropic usage object. Fields absent from this event stay -1 (not reported here).
Usage messages_usage(const JsonValue* u) {
  Usage usage;
  if (u == nullptr || !u->IsObject()) return usage;
  usage.present = true;
  const int64_t input = count_of(field(u, "input_tokens"), -1);
  const int64_t cache_read = count_of(field(u, "cache_read_input_tokens"), -1);
  const int64_t cache_creation = count_of(field(u, "cache_creation_input_tokens"), -1);
  usage.prompt_tokens = input;
  // Cached input counted apart; summed without overflow (a count near int64's end is garbage
  // anyway, but must not be undefined).
  for (const int64_t part : {cache_read, cache_creation}) {
    if (usage.prompt_tokens < 0 || part <= 0) continue;
    usage.prompt_tokens =
        part > INT64_MAX - usage.prompt_tokens ? INT64_MAX : usage.prompt_tokens + part;
  }
  usage.completion_tokens = count_of(field(u, "output_tokens"), -1);
  usage.cached_tokens = cache_read;
  return usage;
}

void add_output(std::string_view delta, std::string& text, ReplyChunk& chunk) {
  if (delta.empty()) return;
  chunk.has_output = true;
  chunk.has_content = true;
  text.append(delta);
}

void add_reasoning(std::string_view delta, ReplyChunk& chunk) {
  if (delta.empty()) return;
  chunk.has_reasoning = true;
  chunk.has_content = true;
}

// Events that carry the whole response object: its id, and at the end its usage and error.
void read_response_object(const JsonValue* response, std::string_view type, ReplyChunk& chunk) {
  chunk.response_id = std::string(text_of(field(response, "id")));
  const bool end =
      type == "response.completed" || type == "response.incomplete" || type == "response.failed";
  if (!end) return;
  chunk.stream_end = true;
  chunk.usage = responses_usage(field(response, "usage"));
  const JsonValue* e = field(response, "error");
  if (e != nullptr && !e->IsNull()) chunk.error = api_error_of(*e);
  if (type == "response.failed" && !chunk.error.present) {
    chunk.error.present = true;
    chunk.error.message = "response.failed without an error object";
  }
}

}  // namespace

ReplyChunk parse_responses_event(std::string_view data, std::string& text) {
  ReplyChunk chunk;
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(data.data(), data.size());
  if (doc.HasParseError()) return chunk;
  chunk.valid_json = true;
  const std::string_view type = text_of(field(&doc, "type"));
  if (type == "error") {
    chunk.error = api_error_of(doc);
  } else if (type == "response.output_text.delta") {
    add_output(text_of(field(&doc, "delta")), text, chunk);
  } else if (type == "response.reasoning_text.delta" ||
             type == "response.reasoning_summary_text.delta") {
    add_reasoning(text_of(field(&doc, "delta")), chunk);
  } else if (const JsonValue* response = field(&doc, "response")) {
    read_response_object(response, type, chunk);
  } else if (const JsonValue* e = field(&doc, "error"); e != nullptr && !e->IsNull()) {
    chunk.error = api_error_of(*e);
  }
  return chunk;
}

ReplyChunk parse_messages_event(std::string_view data, std::string& text) {
  ReplyChunk chunk;
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(data.data(), data.size());
  if (doc.HasParseError()) return chunk;
  chunk.valid_json = true;
  const std::string_view type = text_of(field(&doc, "type"));
  if (const JsonValue* e = field(&doc, "error"); e != nullptr && !e->IsNull()) {
    chunk.error = api_error_of(*e);
    return chunk;
  }
  if (type == "content_block_delta") {
    const JsonValue* delta = field(&doc, "delta");
    const std::string_view kind = text_of(field(delta, "type"));
    if (kind == "text_delta") add_output(text_of(field(delta, "text")), text, chunk);
    if (kind == "thinking_delta") add_reasoning(text_of(field(delta, "thinking")), chunk);
  } else if (type == "message_start") {
    const JsonValue* message = field(&doc, "message");
    chunk.response_id = std::string(text_of(field(message, "id")));
    chunk.usage = messages_usage(field(message, "usage"));
    return chunk;
  } else if (type == "message_stop") {
    chunk.stream_end = true;
  }
  // Dynamo adds a running usage to each content_block_delta as well as to message_delta.
  chunk.usage = messages_usage(field(&doc, "usage"));
  return chunk;
}

ReplyChunk parse_responses_body(std::string_view body, std::string& text) {
  ReplyChunk chunk;
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError()) return chunk;
  chunk.valid_json = true;
  if (const JsonValue* e = field(&doc, "error"); e != nullptr && !e->IsNull()) {
    chunk.error = api_error_of(*e);
    return chunk;
  }
  chunk.response_id = std::string(text_of(field(&doc, "id")));
  chunk.usage = responses_usage(field(&doc, "usage"));
  const JsonValue* output = field(&doc, "output");
  if (output == nullptr || !output->IsArray()) return chunk;
  for (const JsonValue& item : output->GetArray()) {
    const std::string_view kind = text_of(field(&item, "type"));
    if (kind == "reasoning") add_reasoning("reasoning", chunk);
    const JsonValue* content = field(&item, "content");
    if (kind != "message" || content == nullptr || !content->IsArray()) continue;
    for (const JsonValue& part : content->GetArray()) {
      if (text_of(field(&part, "type")) == "output_text") {
        add_output(text_of(field(&part, "text")), text, chunk);
      }
    }
  }
  return chunk;
}

ReplyChunk parse_messages_body(std::string_view body, std::string& text) {
  ReplyChunk chunk;
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError()) return chunk;
  chunk.valid_json = true;
  if (const JsonValue* e = field(&doc, "error"); e != nullptr && !e->IsNull()) {
    chunk.error = api_error_of(*e);
    return chunk;
  }
  chunk.response_id = std::string(text_of(field(&doc, "id")));
  chunk.usage = messages_usage(field(&doc, "usage"));
  if (chunk.usage.prompt_tokens < 0) chunk.usage.prompt_tokens = 0;
  if (chunk.usage.completion_tokens < 0) chunk.usage.completion_tokens = 0;
  const JsonValue* content = field(&doc, "content");
  if (content == nullptr || !content->IsArray()) return chunk;
  for (const JsonValue& block : content->GetArray()) {
    const std::string_view kind = text_of(field(&block, "type"));
    if (kind == "text") add_output(text_of(field(&block, "text")), text, chunk);
    if (kind == "thinking") add_reasoning(text_of(field(&block, "thinking")), chunk);
  }
  return chunk;
}

}  // namespace convoy::worker
