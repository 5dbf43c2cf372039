#include "mock/tokenize.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "mock/api_request.hpp"
#include "mock/tokens.hpp"

namespace convoy::mock {

std::variant<std::string, ApiError> tokenize_reply(const rapidjson::Value& body,
                                                   std::string_view raw_body,
                                                   const Options& options) {
  if (!body.IsObject()) return bad_request("invalid type: expected a JSON object");
  const bool chat = body.HasMember("messages");
  if (!chat && !body.HasMember("prompt")) {
    return bad_request("missing field `prompt` or `messages`");
  }
  auto parsed =
      read_api_request(chat ? Endpoint::kChat : Endpoint::kCompletions, body, raw_body, options);
  if (auto* error = std::get_if<ApiError>(&parsed)) return *error;
  std::string prompt = std::move(std::get<ApiRequest>(parsed).prompt);
  const auto generation = body.FindMember("add_generation_prompt");
  const bool strip_generation = chat && generation != body.MemberEnd() &&
                                generation->value.IsBool() && !generation->value.GetBool();
  if (strip_generation) prompt.resize(prompt.size() - kChatGenerationPrompt.size());

  // One id per 4-byte token: the token's bytes read as a little-endian number, modulo a
  // vocabulary of 2^17 (only the count means anything).
  const int64_t count = count_tokens(prompt);
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("count");
  w.Int64(count);
  w.Key("max_model_len");
  w.Int64(kMockMaxModelLen);
  w.Key("tokens");
  w.StartArray();
  for (size_t at = 0; at < prompt.size(); at += static_cast<size_t>(kBytesPerToken)) {
    uint32_t id = 0;
    for (size_t i = 0; i < static_cast<size_t>(kBytesPerToken) && at + i < prompt.size(); ++i) {
      id |= static_cast<uint32_t>(static_cast<unsigned char>(prompt[at + i])) << (8 * i);
    }
    w.Uint(id % (1u << 17));
  }
  w.EndArray();
  w.EndObject();
  return std::string(out.GetString(), out.GetSize());
}

}  // namespace convoy::mock
