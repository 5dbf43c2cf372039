#include "worker/reply_parser.hpp"

#include "worker/api_events.hpp"
#include "worker/stream_event_parser.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>

namespace convoy::worker {

namespace {

using Allocator = rapidjson::MemoryPoolAllocator<>;
using Document = rapidjson::GenericDocument<rapidjson::UTF8<>, Allocator, Allocator>;
using Value = rapidjson::GenericValue<rapidjson::UTF8<>, Allocator>;

// Stack buffers sized for a typical streamed chunk, so most events parse without touching the
// heap; larger documents spill into pool chunks that die with the parse.
class Parsed {
 public:
  explicit Parsed(std::string_view json)
      : values_(value_buffer_, sizeof value_buffer_),
        stack_(stack_buffer_, sizeof stack_buffer_),
        doc_(&values_, sizeof stack_buffer_, &stack_) {
    // Iterative: a deeply nested reply cannot overflow the worker's stack.
    doc_.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  }
  bool ok() const { return !doc_.HasParseError(); }
  const Document& doc() const { return doc_; }

 private:
  alignas(16) char value_buffer_[8192];
  alignas(16) char stack_buffer_[2048];
  Allocator values_;
  Allocator stack_;
  Document doc_;
};

const Value* member(const Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string_view string_of(const Value* value) {
  if (value == nullptr || !value->IsString()) return {};
  return {value->GetString(), value->GetStringLength()};
}

int64_t int_of(const Value* value, int64_t fallback) {
  if (value == nullptr) return fallback;
  if (value->IsInt64()) return value->GetInt64();
  if (value->IsUint64()) return static_cast<int64_t>(value->GetUint64());
  if (value->IsDouble()) {
    const double d = value->GetDouble();
    // Outside int64 (a fuzzer's 7e86, or NaN) the cast is undefined: treat as absent.
    return d > -9.2e18 && d < 9.2e18 ? static_cast<int64_t>(d) : fallback;
  }
  return fallback;
}

std::string to_json(const Value& value) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  value.Accept(writer);
  return {out.GetString(), out.GetSize()};
}

Usage usage_of(const Value& root) {
  Usage usage;
  const Value* u = member(root, "usage");
  if (u == nullptr || !u->IsObject()) return usage;
  usage.present = true;
  usage.prompt_tokens = int_of(member(*u, "prompt_tokens"), 0);
  usage.completion_tokens = int_of(member(*u, "completion_tokens"), 0);
  if (const Value* details = member(*u, "prompt_tokens_details")) {
    usage.cached_tokens = int_of(member(*details, "cached_tokens"), -1);
  }
  if (const Value* details = member(*u, "completion_tokens_details")) {
    usage.reasoning_tokens = int_of(member(*details, "reasoning_tokens"), -1);
  }
  return usage;
}

// A worker id of nvext.worker_id: an unsigned integer in decimal, or a non-empty string.
std::string worker_id_of(const Value* value) {
  if (value == nullptr) return {};
  if (value->IsUint64()) return std::to_string(value->GetUint64());
  if (value->IsString()) return std::string(string_of(value));
  return {};
}

int64_t rank_of(const Value* value) {
  if (value == nullptr || !value->IsInt64() || value->GetInt64() < 0) return -1;
  return value->GetInt64();
}

ServedBy served_by_of(const Value& root) {
  ServedBy out;
  const Value* nvext = member(root, "nvext");
  const Value* info = nvext == nullptr ? nullptr : member(*nvext, "worker_id");
  if (info == nullptr || !info->IsObject()) return out;
  out.worker = worker_id_of(member(*info, "decode_worker_id"));
  if (!out.worker.empty()) {
    out.dp_rank = rank_of(member(*info, "decode_dp_rank"));
  } else {
    out.worker = worker_id_of(member(*info, "prefill_worker_id"));
    if (!out.worker.empty()) out.dp_rank = rank_of(member(*info, "prefill_dp_rank"));
  }
  out.present = !out.worker.empty();
  return out;
}

// nvext.timing's milliseconds (proto::ServerTiming has the fields and their meaning).
proto::ServerTiming server_timing_of(const Value& root) {
  proto::ServerTiming out;
  const Value* nvext = member(root, "nvext");
  const Value* timing = nvext == nullptr ? nullptr : member(*nvext, "timing");
  if (timing == nullptr || !timing->IsObject()) return out;
  const auto ms = [&](const char* key) {
    const Value* v = member(*timing, key);
    if (v == nullptr || !v->IsNumber()) return -1.0;
    const double d = v->GetDouble();
    return std::isfinite(d) && d >= 0 ? d : -1.0;
  };
  out.queue_ms = ms("prefill_wait_time_ms");
  out.prefill_ms = ms("prefill_time_ms");
  out.ttft_ms = ms("ttft_ms");
  out.total_ms = ms("total_time_ms");
  out.avg_itl_ms = ms("avg_itl_ms");
  return out;
}

// Fills message/type/code from an object shaped {"message","type","code"}.
void fields_from(const Value& object, ServerError& error) {
  error.message = trim_message(string_of(member(object, "message")));
  error.type = std::string(string_of(member(object, "type")));
  const Value* code = member(object, "code");
  error.code = int_of(code, 0);
  if (error.type.empty()) error.type = std::string(string_of(code));
  if (error.message.empty()) {
    const Value* detail = member(object, "detail");  // FastAPI validation errors
    if (detail != nullptr && detail->IsString()) {
      error.message = trim_message(string_of(detail));
    } else if (detail != nullptr && !detail->IsNull()) {
      error.message = trim_message(to_json(*detail));
    }
  }
}

// A streamed or whole reply that is an error: {"error": {...} | "text"} or {"object": "error"}.
ServerError error_of(const Value& root) {
  ServerError error;
  if (!root.IsObject()) return error;
  const Value* e = member(root, "error");
  if (e != nullptr && !e->IsNull() && !(e->IsBool() && !e->GetBool())) {
    error.present = true;
    if (e->IsObject()) {
      fields_from(*e, error);
    } else if (e->IsString()) {
      error.message = trim_message(string_of(e));
    } else {
      error.message = trim_message(to_json(*e));
    }
    if (error.message.empty()) error.message = trim_message(to_json(root));
    return error;
  }
  if (string_of(member(root, "object")) == "error") {
    error.present = true;
    fields_from(root, error);
    if (error.message.empty()) error.message = trim_message(to_json(root));
  }
  return error;
}

// Visits content in each choice; appends choice 0's to `text`. `field` is where content lives
// inside a choice (chat: "delta"/"message"; completions: the choice itself).
void collect_choices(const Value& root, const char* field, std::string& text, ReplyChunk& chunk) {
  const Value* choices = member(root, "choices");
  if (choices == nullptr || !choices->IsArray()) return;
  for (const Value& choice : choices->GetArray()) {
    const Value* holder = field == nullptr ? &choice : member(choice, field);
    if (holder == nullptr || !holder->IsObject()) continue;
    const std::string_view content =
        string_of(member(*holder, field == nullptr ? "text" : "content"));
    const bool first_choice = int_of(member(choice, "index"), 0) == 0;
    if (!content.empty()) {
      chunk.has_output = true;
      if (first_choice) text.append(content);
    }
    if (field != nullptr && (!string_of(member(*holder, "reasoning_content")).empty() ||
                             !string_of(member(*holder, "reasoning")).empty())) {
      chunk.has_reasoning = true;
    }
  }
  chunk.has_content = chunk.has_output || chunk.has_reasoning;
}

ReplyChunk parse_reply(std::string_view json, Endpoint endpoint, bool streaming,
                       std::string& text) {
  ReplyChunk chunk;
  const Parsed parsed(json);
  if (!parsed.ok()) return chunk;
  chunk.valid_json = true;
  const Value& root = parsed.doc();
  chunk.error = error_of(root);
  if (chunk.error.present) return chunk;
  chunk.usage = usage_of(root);
  chunk.served_by = served_by_of(root);
  chunk.server_timing = server_timing_of(root);
  switch (endpoint) {
    case Endpoint::kChat:
      collect_choices(root, streaming ? "delta" : "message", text, chunk);
      break;
    case Endpoint::kCompletions:
      collect_choices(root, nullptr, text, chunk);
      break;
    case Endpoint::kEmbeddings: {
      const Value* data = member(root, "data");
      if (data != nullptr && data->IsArray()) chunk.items = static_cast<int64_t>(data->Size());
      chunk.has_content = chunk.items > 0;
      break;
    }
    case Endpoint::kResponses:
    case Endpoint::kMessages:
      break;  // read by worker/api_events.cpp before this
  }
  return chunk;
}

}  // namespace

ReplyChunk parse_stream_event(std::string_view data, Endpoint endpoint, std::string& text) {
  if (endpoint == Endpoint::kResponses) return parse_responses_event(data, text);
  if (endpoint == Endpoint::kMessages) return parse_messages_event(data, text);
  if (auto fast = parse_stream_event_fast(data, endpoint, text)) return *fast;
  return parse_reply(data, endpoint, true, text);
}

ReplyChunk parse_stream_event_document(std::string_view data, Endpoint endpoint,
                                       std::string& text) {
  if (endpoint == Endpoint::kResponses) return parse_responses_event(data, text);
  if (endpoint == Endpoint::kMessages) return parse_messages_event(data, text);
  return parse_reply(data, endpoint, true, text);
}

ReplyChunk parse_reply_body(std::string_view body, Endpoint endpoint, std::string& text) {
  if (endpoint == Endpoint::kResponses) return parse_responses_body(body, text);
  if (endpoint == Endpoint::kMessages) return parse_messages_body(body, text);
  return parse_reply(body, endpoint, false, text);
}

ServerError parse_error_body(std::string_view body) {
  ServerError error;
  const Parsed parsed(body);
  if (parsed.ok() && parsed.doc().IsObject()) {
    error = error_of(parsed.doc());
    if (!error.present) fields_from(parsed.doc(), error);
  }
  error.present = true;
  if (error.message.empty()) error.message = trim_message(body);
  return error;
}

std::string trim_message(std::string_view text, size_t max_bytes) {
  const auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Back off continuation bytes (10xxxxxx) so a multi-byte character is never split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
  return std::string(text.substr(0, cut));
}

}  // namespace convoy::worker
