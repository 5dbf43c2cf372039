#include "mock/api_formats.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string_view>

#include "mock/tokens.hpp"

namespace convoy::mock {

namespace {

using JsonOut = rapidjson::Writer<rapidjson::StringBuffer>;

void put_text(JsonOut& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void key_str(JsonOut& w, const char* key, std::string_view value) {
  w.Key(key);
  put_text(w, value);
}

void key_int(JsonOut& w, const char* key, int64_t value) {
  w.Key(key);
  w.Int64(value);
}

std::string tokens_text(int64_t from, int64_t to) {
  std::string text;
  for (int64_t i = from; i < to; ++i) text.append(output_token(static_cast<uint64_t>(i)));
  return text;
}

std::string answer_text(const ResponseInfo& info) {
  return tokens_text(info.reasoning_tokens, info.completion_tokens);
}

std::string sse(std::string_view type, const rapidjson::StringBuffer& buf) {
  std::string out;
  out.reserve(buf.GetSize() + type.size() + 16);
  out.append("event: ").append(type).append("\ndata: ");
  out.append(buf.GetString(), buf.GetSize());
  out.append("\n\n");
  return out;
}

// ---- responses --------------------------------------------------------------------------

std::string message_item_id(const ResponseInfo& info) { return "msg_" + info.id.substr(5); }

void responses_usage(JsonOut& w, const ResponseInfo& info) {
  w.Key("usage");
  w.StartObject();
  key_int(w, "input_tokens", info.prompt_tokens);
  w.Key("input_tokens_details");
  w.StartObject();
  key_int(w, "cached_tokens", info.cached_tokens);
  w.EndObject();
  key_int(w, "output_tokens", info.completion_tokens);
  w.Key("output_tokens_details");
  w.StartObject();
  key_int(w, "reasoning_tokens", info.reasoning_tokens);
  w.EndObject();
  key_int(w, "total_tokens", info.prompt_tokens + info.completion_tokens);
  w.EndObject();
}

void message_item(JsonOut& w, const ResponseInfo& info, bool done) {
  w.StartObject();
  key_str(w, "type", "message");
  w.Key("content");
  w.StartArray();
  if (done) {
    w.StartObject();
    key_str(w, "type", "output_text");
    w.Key("annotations");
    w.StartArray();
    w.EndArray();
    key_str(w, "text", answer_text(info));
    w.EndObject();
  }
  w.EndArray();
  key_str(w, "id", message_item_id(info));
  key_str(w, "role", "assistant");
  key_str(w, "status", done ? "incomplete" : "in_progress");
  w.EndObject();
}

// The response object of response.created / .in_progress (`done` false) and of the final
// event or the whole body (`done` true).
void response_object(JsonOut& w, const ResponseInfo& info, bool done) {
  w.StartObject();
  key_str(w, "id", info.id);
  key_str(w, "object", "response");
  key_int(w, "created_at", info.created);
  key_str(w, "model", info.model);
  key_str(w, "status", done ? "incomplete" : "in_progress");
  w.Key("incomplete_details");
  if (done) {
    w.StartObject();
    key_str(w, "reason", "max_output_tokens");
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("error");
  w.Null();
  w.Key("previous_response_id");
  if (info.previous_response_id.empty()) {
    w.Null();
  } else {
    put_text(w, info.previous_response_id);
  }
  w.Key("output");
  w.StartArray();
  if (done && info.reasoning_tokens > 0) {
    w.StartObject();
    key_str(w, "type", "reasoning");
    key_str(w, "id", "rs_" + info.id.substr(5));
    w.Key("summary");
    w.StartArray();
    w.EndArray();
    w.Key("content");
    w.StartArray();
    w.StartObject();
    key_str(w, "type", "reasoning_text");
    key_str(w, "text", tokens_text(0, info.reasoning_tokens));
    w.EndObject();
    w.EndArray();
    w.EndObject();
  }
  if (done) message_item(w, info, true);
  w.EndArray();
  if (done) {
    responses_usage(w, info);
  } else {
    w.Key("usage");
    w.Null();
  }
  w.EndObject();
}

// {"type": TYPE, "sequence_number": N, ...fill} as one SSE event.
template <typename Fill>
std::string responses_event(std::string_view type, int64_t sequence, Fill fill) {
  rapidjson::StringBuffer buf;
  JsonOut w(buf);
  w.StartObject();
  key_str(w, "type", type);
  key_int(w, "sequence_number", sequence);
  fill(w);
  w.EndObject();
  return sse(type, buf);
}

void content_address(JsonOut& w, const ResponseInfo& info) {
  key_str(w, "item_id", message_item_id(info));
  key_int(w, "output_index", 0);
  key_int(w, "content_index", 0);
}

std::string responses_open(const ResponseInfo& info) {
  auto whole = [&info](JsonOut& w) {
    w.Key("response");
    response_object(w, info, false);
  };
  std::string out = responses_event("response.created", 0, whole);
  out += responses_event("response.in_progress", 1, whole);
  out += responses_event("response.output_item.added", 2, [&info](JsonOut& w) {
    key_int(w, "output_index", 0);
    w.Key("item");
    message_item(w, info, false);
  });
  out += responses_event("response.content_part.added", 3, [&info](JsonOut& w) {
    content_address(w, info);
    w.Key("part");
    w.StartObject();
    key_str(w, "type", "output_text");
    key_str(w, "text", "");
    w.EndObject();
  });
  return out;
}

std::string responses_token(const ResponseInfo& info, int64_t index) {
  const bool reasoning = index < info.reasoning_tokens;
  return responses_event(reasoning ? "response.reasoning_text.delta" : "response.output_text.delta",
                         4 + index, [&](JsonOut& w) {
                           content_address(w, info);
                           key_str(w, "delta", output_token(static_cast<uint64_t>(index)));
                         });
}

std::string responses_close(const ResponseInfo& info) {
  int64_t sequence = 4 + info.completion_tokens;
  const std::string text = answer_text(info);
  std::string out = responses_event("response.output_text.done", sequence++, [&](JsonOut& w) {
    content_address(w, info);
    key_str(w, "text", text);
  });
  out += responses_event("response.content_part.done", sequence++, [&](JsonOut& w) {
    content_address(w, info);
    w.Key("part");
    w.StartObject();
    key_str(w, "type", "output_text");
    key_str(w, "text", text);
    w.EndObject();
  });
  out += responses_event("response.output_item.done", sequence++, [&](JsonOut& w) {
    key_int(w, "output_index", 0);
    w.Key("item");
    message_item(w, info, true);
  });
  out += responses_event("response.incomplete", sequence, [&](JsonOut& w) {
    w.Key("response");
    response_object(w, info, true);
  });
  return out;
}

// ---- messages ---------------------------------------------------------------------------

void messages_usage(JsonOut& w, const ResponseInfo& info, int64_t output_tokens, bool final) {
  w.Key("usage");
  w.StartObject();
  // Anthropic counts cached input apart from input_tokens; the cache is known once decoding
  // started, so message_start reports the whole prompt as input.
  const int64_t cached = final && info.report_cached_tokens ? info.cached_tokens : 0;
  key_int(w, "input_tokens", info.prompt_tokens - cached);
  key_int(w, "output_tokens", output_tokens);
  key_int(w, "cache_creation_input_tokens", 0);
  if (final && info.report_cached_tokens) key_int(w, "cache_read_input_tokens", cached);
  w.EndObject();
}

template <typename Fill>
std::string messages_event(std::string_view type, Fill fill) {
  rapidjson::StringBuffer buf;
  JsonOut w(buf);
  w.StartObject();
  key_str(w, "type", type);
  fill(w);
  w.EndObject();
  return sse(type, buf);
}

std::string block_start(int64_t index, bool thinking) {
  return messages_event("content_block_start", [&](JsonOut& w) {
    key_int(w, "index", index);
    w.Key("content_block");
    w.StartObject();
    key_str(w, "type", thinking ? "thinking" : "text");
    key_str(w, thinking ? "thinking" : "text", "");
    w.EndObject();
  });
}

std::string block_stop(int64_t index) {
  return messages_event("content_block_stop", [&](JsonOut& w) { key_int(w, "index", index); });
}

std::string messages_open(const ResponseInfo& info) {
  std::string out = messages_event("message_start", [&](JsonOut& w) {
    w.Key("message");
    w.StartObject();
    key_str(w, "id", info.id);
    key_str(w, "type", "message");
    key_str(w, "role", "assistant");
    w.Key("content");
    w.StartArray();
    w.EndArray();
    key_str(w, "model", info.model);
    w.Key("stop_reason");
    w.Null();
    w.Key("stop_sequence");
    w.Null();
    messages_usage(w, info, 0, false);
    w.EndObject();
  });
  return out + block_start(0, info.reasoning_tokens > 0);
}

std::string messages_token(const ResponseInfo& info, int64_t index) {
  const bool thinking = index < info.reasoning_tokens;
  const int64_t block = info.reasoning_tokens > 0 && !thinking ? 1 : 0;
  std::string out;
  if (index == info.reasoning_tokens && block == 1) out = block_stop(0) + block_start(1, false);
  out += messages_event("content_block_delta", [&](JsonOut& w) {
    key_int(w, "index", block);
    w.Key("delta");
    w.StartObject();
    key_str(w, "type", thinking ? "thinking_delta" : "text_delta");
    key_str(w, thinking ? "thinking" : "text", output_token(static_cast<uint64_t>(index)));
    w.EndObject();
  });
  return out;
}

std::string messages_close(const ResponseInfo& info) {
  const bool text_block = info.completion_tokens > info.reasoning_tokens;
  std::string out = block_stop(info.reasoning_tokens > 0 && text_block ? 1 : 0);
  out += messages_event("message_delta", [&](JsonOut& w) {
    w.Key("delta");
    w.StartObject();
    key_str(w, "stop_reason", "max_tokens");
    w.Key("stop_sequence");
    w.Null();
    w.EndObject();
    messages_usage(w, info, info.completion_tokens, true);
  });
  return out + messages_event("message_stop", [](JsonOut&) {});
}

std::string messages_body(const ResponseInfo& info) {
  rapidjson::StringBuffer buf;
  JsonOut w(buf);
  w.StartObject();
  key_str(w, "id", info.id);
  key_str(w, "type", "message");
  key_str(w, "role", "assistant");
  w.Key("content");
  w.StartArray();
  if (info.reasoning_tokens > 0) {
    w.StartObject();
    key_str(w, "type", "thinking");
    key_str(w, "thinking", tokens_text(0, info.reasoning_tokens));
    key_str(w, "signature", "");
    w.EndObject();
  }
  w.StartObject();
  key_str(w, "type", "text");
  key_str(w, "text", answer_text(info));
  w.EndObject();
  w.EndArray();
  key_str(w, "model", info.model);
  key_str(w, "stop_reason", "max_tokens");
  w.Key("stop_sequence");
  w.Null();
  messages_usage(w, info, info.completion_tokens, true);
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

}  // namespace

const char* response_id_prefix(Endpoint endpoint) {
  switch (endpoint) {
    case Endpoint::kChat:
      return "chatcmpl-";
    case Endpoint::kCompletions:
      return "cmpl-";
    case Endpoint::kEmbeddings:
      return "embd-";
    case Endpoint::kResponses:
      return "resp_";
    case Endpoint::kMessages:
      return "msg_";
  }
  return "";
}

std::string stream_open_events(Endpoint endpoint, const ResponseInfo& info) {
  if (endpoint == Endpoint::kResponses) return responses_open(info);
  if (endpoint == Endpoint::kMessages) return messages_open(info);
  return {};
}

std::string api_token_event(Endpoint endpoint, const ResponseInfo& info, int64_t index) {
  return endpoint == Endpoint::kResponses ? responses_token(info, index)
                                          : messages_token(info, index);
}

std::string stream_close_events(Endpoint endpoint, const ResponseInfo& info) {
  std::string out = endpoint == Endpoint::kResponses ? responses_close(info) : messages_close(info);
  out.append(kDoneEvent);
  return out;
}

std::string api_response(Endpoint endpoint, const ResponseInfo& info) {
  if (endpoint == Endpoint::kMessages) return messages_body(info);
  rapidjson::StringBuffer buf;
  JsonOut w(buf);
  response_object(w, info, true);
  return {buf.GetString(), buf.GetSize()};
}

}  // namespace convoy::mock
