#include "mock/responses.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "mock/tokens.hpp"

namespace convoy::mock {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void header(Writer& w, const ResponseInfo& info, const char* object) {
  w.Key("id");
  str(w, info.id);
  w.Key("object");
  w.String(object);
  w.Key("created");
  w.Int64(info.created);
  w.Key("model");
  str(w, info.model);
}

void usage(Writer& w, const ResponseInfo& info) {
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int64(info.prompt_tokens);
  w.Key("completion_tokens");
  w.Int64(info.completion_tokens);
  w.Key("total_tokens");
  w.Int64(info.prompt_tokens + info.completion_tokens);
  if (info.report_cached_tokens) {
    w.Key("prompt_tokens_details");
    w.StartObject();
    w.Key("cached_tokens");
    w.Int64(info.cached_tokens);
    w.EndObject();
  }
  if (info.reasoning_tokens > 0) {  // OpenAI's usage: reasoning is part of completion_tokens
    w.Key("completion_tokens_details");
    w.StartObject();
    w.Key("reasoning_tokens");
    w.Int64(info.reasoning_tokens);
    w.EndObject();
  }
  w.EndObject();
}

// Output tokens [from, to) concatenated.
std::string output_range(int64_t from, int64_t to) {
  std::string text;
  for (int64_t i = from; i < to; ++i) text.append(output_token(static_cast<uint64_t>(i)));
  return text;
}

// Dynamo's NvExtResponse (lib/llm/src/protocols/openai/nvext.rs): worker_id is a WorkerIdInfo;
// in aggregated serving the tracker records the one worker as both prefill and decode worker
// (lib/llm/src/protocols/common/timing.rs RequestTracker::record_worker_full).
void nvext(Writer& w, const ResponseInfo& info, bool worker_id, bool timing) {
  worker_id = worker_id && info.with_worker_id;
  timing = timing && info.with_timing;
  if (!worker_id && !timing) return;
  w.Key("nvext");
  w.StartObject();
  if (worker_id) {
    w.Key("worker_id");
    w.StartObject();
    w.Key("prefill_worker_id");
    w.Uint64(info.instance_id);
    w.Key("prefill_dp_rank");
    w.Int(info.dp_rank);
    w.Key("decode_worker_id");
    w.Uint64(info.instance_id);
    w.Key("decode_dp_rank");
    w.Int(info.dp_rank);
    w.EndObject();
  }
  if (timing) {
    w.Key("timing");
    w.StartObject();
    w.Key("request_received_ms");
    w.Int64(info.received_unix_ms);
    w.Key("prefill_wait_time_ms");
    w.Double(info.queue_ms);
    w.Key("prefill_time_ms");
    w.Double(info.prefill_ms);
    w.Key("ttft_ms");
    w.Double(info.ttft_ms);
    w.Key("total_time_ms");
    w.Double(info.total_ms);
    w.Key("kv_hit_rate");
    w.Double(info.prompt_tokens > 0
                 ? static_cast<double>(info.cached_tokens) / static_cast<double>(info.prompt_tokens)
                 : 0.0);
    w.Key("router_queue_depth");
    w.Int(0);
    w.EndObject();
  }
  w.EndObject();
}

std::string event(const rapidjson::StringBuffer& buf) {
  std::string out;
  out.reserve(buf.GetSize() + 8);
  out.append("data: ");
  out.append(buf.GetString(), buf.GetSize());
  out.append("\n\n");
  return out;
}

}  // namespace

std::string token_event(Endpoint endpoint, const ResponseInfo& info, int64_t index) {
  const bool first = index == 0;
  const bool last = index + 1 == info.completion_tokens;
  const auto text = output_token(static_cast<uint64_t>(index));
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  const bool chat = endpoint == Endpoint::kChat;
  header(w, info, chat ? "chat.completion.chunk" : "text_completion");
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(0);
  if (chat) {
    w.Key("delta");
    w.StartObject();
    if (first) {
      w.Key("role");
      w.String("assistant");
    }
    w.Key(index < info.reasoning_tokens ? "reasoning_content" : "content");
    str(w, text);
    w.EndObject();
  } else {
    w.Key("text");
    str(w, text);
  }
  w.Key("logprobs");
  w.Null();
  w.Key("finish_reason");
  if (last && !chat) {
    w.String("length");
  } else {
    w.Null();
  }
  w.EndObject();
  w.EndArray();
  nvext(w, info, true, last && !chat);
  w.EndObject();
  return event(buf);
}

std::string finish_event(const ResponseInfo& info, bool legacy_era) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  header(w, info, "chat.completion.chunk");
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(0);
  w.Key("delta");
  w.StartObject();
  if (legacy_era) {
    w.Key("role");
    w.String("assistant");
  }
  w.EndObject();
  w.Key("logprobs");
  w.Null();
  w.Key("finish_reason");
  w.String("length");
  w.EndObject();
  w.EndArray();
  nvext(w, info, true, true);
  w.EndObject();
  return event(buf);
}

std::string usage_event(Endpoint endpoint, const ResponseInfo& info) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  header(w, info, endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion");
  w.Key("choices");
  w.StartArray();
  w.EndArray();
  usage(w, info);
  w.EndObject();
  return event(buf);
}

std::string chat_response(const ResponseInfo& info) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  header(w, info, "chat.completion");
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(0);
  w.Key("message");
  w.StartObject();
  w.Key("role");
  w.String("assistant");
  const int64_t reasoning = std::min(info.reasoning_tokens, info.completion_tokens);
  w.Key("content");
  str(w, output_range(reasoning, info.completion_tokens));
  if (reasoning > 0) {
    w.Key("reasoning_content");
    str(w, output_text(reasoning));
  }
  w.EndObject();
  w.Key("logprobs");
  w.Null();
  w.Key("finish_reason");
  w.String("length");
  w.EndObject();
  w.EndArray();
  usage(w, info);
  nvext(w, info, true, true);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string completion_response(const ResponseInfo& info) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  header(w, info, "text_completion");
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(0);
  w.Key("text");
  str(w, output_text(info.completion_tokens));
  w.Key("logprobs");
  w.Null();
  w.Key("finish_reason");
  w.String("length");
  w.EndObject();
  w.EndArray();
  usage(w, info);
  nvext(w, info, true, true);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string embeddings_response(const ResponseInfo& info, int64_t inputs, uint64_t seed) {
  constexpr int kDimensions = 16;
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("object");
  w.String("list");
  w.Key("model");
  str(w, info.model);
  w.Key("data");
  w.StartArray();
  uint64_t state = seed ^ 0x9e3779b97f4a7c15ULL;
  for (int64_t i = 0; i < inputs; ++i) {
    w.StartObject();
    w.Key("object");
    w.String("embedding");
    w.Key("index");
    w.Int64(i);
    w.Key("embedding");
    w.StartArray();
    for (int d = 0; d < kDimensions; ++d) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      w.Double(static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53) - 0.5);
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int64(info.prompt_tokens);
  w.Key("total_tokens");
  w.Int64(info.prompt_tokens);
  w.EndObject();
  nvext(w, info, true, true);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string models_response(const std::vector<std::string>& models, int64_t created) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("object");
  w.String("list");
  w.Key("data");
  w.StartArray();
  for (const auto& model : models) {
    w.StartObject();
    w.Key("id");
    str(w, model);
    w.Key("object");
    w.String("model");
    w.Key("created");
    w.Int64(created);
    w.Key("owned_by");
    w.String("convoy-mock");
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string health_response(std::string_view model, int workers) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("status");
  w.String("healthy");
  w.Key("model");
  str(w, model);
  w.Key("workers");
  w.Int(workers);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace convoy::mock
