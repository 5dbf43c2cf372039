#include "controller/jsonl_dataset.hpp"

#include <unordered_map>

#include "controller/dataset_rows.hpp"

namespace convoy::controller {

namespace {

// One turn from a row (single-turn) or from an element of "turns".
proto::Turn parse_turn(const Fields& fields) {
  proto::Turn turn;
  const bool has_text = fields.has("text");
  const bool has_messages = fields.has("messages");
  if (has_text == has_messages) {
    fields.fail("text", has_text ? "\"text\" and \"messages\" are mutually exclusive"
                                 : "one of \"text\" or \"messages\" is required");
  }
  if (has_text) {
    turn.user_text = *fields.string("text", true);
    turn.input_tokens_est = estimate_tokens(turn.user_text);
  } else {
    turn.messages_json = *fields.messages_json("messages", turn.input_tokens_est);
  }
  const auto* max_tokens = fields.get("max_tokens");
  if (max_tokens == nullptr) {
    turn.max_tokens = kUnsetMaxTokens;
  } else if (max_tokens->IsNull()) {
    turn.max_tokens = 0;  // explicitly: do not send max_tokens
  } else {
    turn.max_tokens = *fields.integer("max_tokens", 1);
  }
  turn.delay_ms = fields.number("delay_ms", 0).value_or(kUnsetDelayMs);
  turn.extra_json = fields.object_json("extra").value_or("");
  turn.recorded_reply = fields.string("reply", false).value_or("");
  return turn;
}

}  // namespace

std::vector<proto::Conversation> parse_jsonl_dataset(std::istream& in, const std::string& source,
                                                     const Config& config, const Corpus& corpus) {
  std::vector<proto::Conversation> conversations;
  std::unordered_map<std::string, int64_t> id_lines;  // explicit conversation_id -> its line
  JsonlReader reader(in, source);
  rapidjson::Document row;
  while (reader.next(row)) {
    const Fields fields(row, reader);
    proto::Conversation conversation;
    if (fields.has("turns")) {
      fields.allow_only({"conversation_id", "turns"});
      const auto* turns = fields.get("turns");
      if (!turns->IsArray()) fields.fail("turns", "expected an array of turns");
      if (turns->Empty()) fields.fail("turns", "must not be empty");
      for (rapidjson::SizeType k = 0; k < turns->Size(); ++k) {
        const std::string at = "turns[" + std::to_string(k) + "]";
        if (!(*turns)[k].IsObject()) fields.fail(at, "expected an object");
        const Fields turn_fields((*turns)[k], reader, at + ".");
        turn_fields.allow_only({"text", "messages", "delay_ms", "max_tokens", "extra", "reply"});
        conversation.turns.push_back(parse_turn(turn_fields));
      }
    } else {
      fields.allow_only({"text", "messages", "max_tokens", "extra", "reply", "conversation_id"});
      conversation.turns.push_back(parse_turn(fields));
    }
    if (auto id = fields.id("conversation_id")) {
      const auto [it, inserted] = id_lines.emplace(*id, reader.line());
      if (!inserted) {
        fields.fail("conversation_id",
                    "\"" + *id + "\" is already used on line " + std::to_string(it->second));
      }
      conversation.conversation_id = std::move(*id);
    }
    conversations.push_back(std::move(conversation));
  }
  if (conversations.empty()) throw ConfigError(source + ": the dataset has no rows");
  finish_file_dataset(conversations, config, corpus);
  return conversations;
}

}  // namespace convoy::controller
