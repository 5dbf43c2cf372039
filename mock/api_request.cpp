#include "mock/api_request.hpp"

#include <algorithm>
#include <cctype>

#include "mock/tokens.hpp"

namespace convoy::mock {

namespace {

ApiError invalid(const std::string& what) {
  return bad_request(std::string(kDeserializePrefix) + what);
}

// serde reports a missing field, and any error in the request's own fields, where the request
// object ends (Dynamo reads them through a flattened struct, buffered first), as the real
// frontends do: "missing field `role` at line 1 column 47" for a 47-byte body.
ApiError missing(std::string_view field, std::string_view raw_body) {
  return invalid("missing field `" + std::string(field) + "` " +
                 json_position(raw_body, {}, false));
}

// Dynamo's own checks after deserializing (lib/llm/src/protocols/openai/validate.rs), with the
// texts the real 1.6.1 frontend answered.
constexpr std::string_view kValidation = "Validation: ";

std::string_view view(const rapidjson::Value& v) {
  return {v.GetString(), static_cast<size_t>(v.GetStringLength())};
}

// Token ids count as one token each: four bytes derived from the id.
void append_token_ids(std::string& out, const rapidjson::Value& ids) {
  for (const auto& id : ids.GetArray()) {
    const auto value = id.IsUint() ? id.GetUint() : 0u;
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>('a' + (value >> (i * 4)) % 16));
  }
}

// A content field: a string, or an array of parts whose "text" fields are concatenated.
bool append_content(std::string& out, const rapidjson::Value& content) {
  if (content.IsNull()) return true;
  if (content.IsString()) {
    out.append(view(content));
    return true;
  }
  if (!content.IsArray()) return false;
  for (const auto& part : content.GetArray()) {
    if (part.IsString()) {
      out.append(view(part));
      continue;
    }
    if (!part.IsObject()) return false;
    const auto text = part.FindMember("text");
    if (text != part.MemberEnd() && text->value.IsString()) out.append(view(text->value));
  }
  return true;
}

std::optional<ApiError> read_messages(const rapidjson::Value& body, std::string_view raw_body,
                                      ApiRequest& req) {
  const auto messages = body.FindMember("messages");
  if (messages == body.MemberEnd()) return missing("messages", raw_body);
  if (!messages->value.IsArray()) return invalid("messages: expected a sequence");
  if (messages->value.Empty()) {
    return bad_request(std::string(kValidation) +
                       "The 'messages' field cannot be empty. At least one message is required.");
  }
  for (const auto& message : messages->value.GetArray()) {
    if (!message.IsObject()) return invalid("messages: expected an object");
    const auto role = message.FindMember("role");
    if (role == message.MemberEnd() || !role->value.IsString()) return missing("role", raw_body);
    std::string content;
    const auto c = message.FindMember("content");
    if (c != message.MemberEnd() && !append_content(content, c->value)) {
      return invalid("messages.content: invalid type");
    }
    append_chat_message(req.prompt, view(role->value), content);
    if (view(role->value) == "user") ++req.user_turns;
  }
  req.prompt.append(kChatGenerationPrompt);
  return std::nullopt;
}

// completions' "prompt" and embeddings' "input": a string, token ids, or an array of either.
std::optional<ApiError> read_text_inputs(const rapidjson::Value& body, std::string_view raw_body,
                                         const char* field, ApiRequest& req) {
  const auto input = body.FindMember(field);
  if (input == body.MemberEnd()) return missing(field, raw_body);
  const auto& v = input->value;
  req.inputs = 1;
  if (v.IsString()) {
    req.prompt.append(view(v));
    return std::nullopt;
  }
  if (!v.IsArray() || v.Empty()) return invalid(std::string(field) + ": invalid type");
  if (v[0].IsNumber()) {
    append_token_ids(req.prompt, v);
    return std::nullopt;
  }
  req.inputs = static_cast<int64_t>(v.Size());
  for (const auto& item : v.GetArray()) {
    if (item.IsString()) {
      req.prompt.append(view(item));
    } else if (item.IsArray()) {
      append_token_ids(req.prompt, item);
    } else {
      return invalid(std::string(field) + ": invalid type");
    }
  }
  return std::nullopt;
}

// responses' "input": a string (one user message) or an array of input items, each a message
// {"role", "content"} (type "message" or none); other item types carry no prompt text.
std::optional<ApiError> read_responses_input(const rapidjson::Value& body,
                                             std::string_view raw_body, ApiRequest& req) {
  const auto input = body.FindMember("input");
  if (input == body.MemberEnd()) return missing("input", raw_body);
  const auto& v = input->value;
  if (v.IsString()) {
    append_chat_message(req.prompt, "user", view(v));
    ++req.user_turns;
  } else if (!v.IsArray()) {
    return invalid("input: invalid type");
  } else {
    for (const auto& item : v.GetArray()) {
      if (!item.IsObject()) return invalid("input: expected an object");
      const auto role = item.FindMember("role");
      if (role == item.MemberEnd() || !role->value.IsString()) continue;
      std::string content;
      const auto c = item.FindMember("content");
      if (c != item.MemberEnd() && !append_content(content, c->value)) {
        return invalid("input.content: invalid type");
      }
      append_chat_message(req.prompt, view(role->value), content);
      if (view(role->value) == "user") ++req.user_turns;
    }
  }
  const auto previous = body.FindMember("previous_response_id");
  if (previous != body.MemberEnd() && previous->value.IsString()) {
    req.previous_response_id = std::string(view(previous->value));
  }
  req.prompt.append(kChatGenerationPrompt);
  return std::nullopt;
}

// messages' "system" (a string or text blocks) before its "messages".
std::optional<ApiError> read_anthropic_messages(const rapidjson::Value& body,
                                                std::string_view raw_body, ApiRequest& req) {
  const auto max_tokens = body.FindMember("max_tokens");
  if (max_tokens == body.MemberEnd()) return missing("max_tokens", raw_body);
  if (max_tokens->value.IsInt64() && max_tokens->value.GetInt64() == 0) {
    return bad_request("max_tokens: must be greater than 0");
  }
  const auto system = body.FindMember("system");
  if (system != body.MemberEnd()) {
    std::string text;
    if (!append_content(text, system->value)) return invalid("system: invalid type");
    if (!text.empty()) append_chat_message(req.prompt, "system", text);
  }
  return read_messages(body, raw_body, req);
}

std::optional<ApiError> read_max_tokens(const rapidjson::Value& body, std::string_view raw_body,
                                        const Options& options, ApiRequest& req) {
  req.max_tokens = options.default_max_tokens;
  for (const char* field : {"max_tokens", "max_completion_tokens", "max_output_tokens"}) {
    const auto it = body.FindMember(field);
    if (it == body.MemberEnd() || it->value.IsNull()) continue;
    const auto& v = it->value;
    if (v.IsInt64() && v.GetInt64() < 0) {  // a u32 in Dynamo's request type
      // At the end of the body, as every error of the flattened request fields.
      return invalid("invalid value: integer `" + std::to_string(v.GetInt64()) +
                     "`, expected u32 " + json_position(raw_body, {}, false));
    }
    if (!v.IsInt64()) return invalid(std::string(field) + ": invalid type, expected u32");
    if (v.GetInt64() == 0) {
      return bad_request(std::string(kValidation) + "Max tokens must be greater than 0, got 0");
    }
    req.max_tokens = v.GetInt64();
  }
  return std::nullopt;
}

void read_flags(const rapidjson::Value& body, ApiRequest& req) {
  const auto stream = body.FindMember("stream");
  req.stream = stream != body.MemberEnd() && stream->value.IsBool() && stream->value.GetBool();
  const auto so = body.FindMember("stream_options");
  if (so != body.MemberEnd() && so->value.IsObject()) {
    const auto usage = so->value.FindMember("include_usage");
    req.include_usage =
        usage != so->value.MemberEnd() && usage->value.IsBool() && usage->value.GetBool();
  }
  // SGLang's top-level session_id: a routing key (see RequestMeta::routing_key).
  const auto session = body.FindMember("session_id");
  if (session != body.MemberEnd() && session->value.IsString()) {
    req.session_id = std::string(view(session->value));
  }
  const auto nvext = body.FindMember("nvext");
  if (nvext == body.MemberEnd() || !nvext->value.IsObject()) return;
  const auto instance = nvext->value.FindMember("backend_instance_id");
  if (instance != nvext->value.MemberEnd() && instance->value.IsUint64()) {
    req.backend_instance_id = instance->value.GetUint64();
  }
  const auto rank = nvext->value.FindMember("dp_rank");
  if (rank != nvext->value.MemberEnd() && rank->value.IsUint()) req.dp_rank = rank->value.GetUint();
  const auto hints = nvext->value.FindMember("agent_hints");
  if (hints != nvext->value.MemberEnd() && hints->value.IsObject()) {
    const auto priority = hints->value.FindMember("priority");
    if (priority != hints->value.MemberEnd() && priority->value.IsInt64()) {
      req.priority = priority->value.GetInt64();
    }
  }
  const auto extra = nvext->value.FindMember("extra_fields");
  if (extra == nvext->value.MemberEnd() || !extra->value.IsArray()) return;
  for (const auto& f : extra->value.GetArray()) {
    if (!f.IsString()) continue;
    if (view(f) == "worker_id") req.want_worker_id = true;
    if (view(f) == "timing") req.want_timing = true;
  }
}

}  // namespace

std::variant<ApiRequest, ApiError> read_api_request(Endpoint endpoint, const rapidjson::Value& body,
                                                    std::string_view raw_body,
                                                    const Options& options) {
  if (!body.IsObject()) return invalid("invalid type: expected a JSON object");
  const auto model = body.FindMember("model");
  if (model == body.MemberEnd()) return missing("model", raw_body);
  if (!model->value.IsString()) {
    return invalid("invalid type: expected a string " + json_position(raw_body, {}, false));
  }
  // Both eras answer exactly this, without the name.
  if (!serves_model(options, view(model->value))) return not_found("Model not found");
  ApiRequest req;
  req.model = std::string(view(model->value));
  req.endpoint = endpoint;
  std::optional<ApiError> error;
  switch (endpoint) {
    case Endpoint::kChat:
      error = read_messages(body, raw_body, req);
      break;
    case Endpoint::kCompletions:
      error = read_text_inputs(body, raw_body, "prompt", req);
      break;
    case Endpoint::kEmbeddings:
      error = read_text_inputs(body, raw_body, "input", req);
      break;
    case Endpoint::kResponses:
      error = read_responses_input(body, raw_body, req);
      break;
    case Endpoint::kMessages:
      error = read_anthropic_messages(body, raw_body, req);
      break;
  }
  if (!error && endpoint != Endpoint::kEmbeddings) {
    error = read_max_tokens(body, raw_body, options, req);
  }
  if (error) return *error;
  read_flags(body, req);
  if (endpoint == Endpoint::kEmbeddings) {
    req.stream = false;
    req.max_tokens = 0;
  }
  req.prompt_tokens = count_tokens(req.prompt);
  return req;
}

namespace {

// serde_json's words for the syntax errors a client can make, at serde's position (1-based,
// the byte it stopped on; 0 for an empty body).
std::string serde_syntax_error(const rapidjson::Document& doc, std::string_view raw_body) {
  const size_t offset = std::min(doc.GetErrorOffset(), raw_body.size());
  size_t before = offset;
  while (before > 0 && std::isspace(static_cast<unsigned char>(raw_body[before - 1]))) --before;
  std::string what = "expected value";
  size_t end = offset + 1;
  if (doc.GetParseError() == rapidjson::kParseErrorDocumentEmpty || offset == raw_body.size()) {
    what = "EOF while parsing a value";
    end = raw_body.size();
  } else if (before > 0 && raw_body[before - 1] == ',' &&
             (raw_body[offset] == '}' || raw_body[offset] == ']')) {
    what = "trailing comma";
  }
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < end && i < raw_body.size(); ++i) {
    if (raw_body[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return what + " at line " + std::to_string(line) + " column " + std::to_string(end - line_start);
}

}  // namespace

// 1.6.x renders it as its other deserialize errors; 1.2.x leaves it to axum, whose rejection is
// a text/plain body.
ApiError json_syntax_error(const rapidjson::Document& doc, std::string_view raw_body,
                           bool legacy_era) {
  const std::string what = serde_syntax_error(doc, raw_body);
  if (legacy_era)
    return ApiError{400, "Failed to parse the request body as JSON: " + what, true, ""};
  return invalid(what);
}

}  // namespace convoy::mock
