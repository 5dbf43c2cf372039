#include "controller/dataset/jsonl_dataset.hpp"

#include <fstream>
#include <iterator>
#include <sstream>
#include <unordered_map>

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
  turn.delay_ms =
      fields.number("delay_ms", 0, kMaxDelayMs, "about 11.6 days").value_or(kUnsetDelayMs);
  turn.extra_json = fields.object_json("extra").value_or("");
  turn.recorded_reply = fields.string("reply", false).value_or("");
  return turn;
}

// A row's conversation before finish_file_conversation (ids and draws unset).
proto::Conversation parse_row(const Fields& fields) {
  proto::Conversation conversation;
  if (fields.has("turns")) {
    fields.allow_only({"conversation_id", "turns"});
    const auto* turns = fields.get("turns");
    if (!turns->IsArray()) fields.fail("turns", "expected an array of turns");
    if (turns->Empty()) fields.fail("turns", "must not be empty");
    for (rapidjson::SizeType k = 0; k < turns->Size(); ++k) {
      const std::string at = "turns[" + std::to_string(k) + "]";
      if (!(*turns)[k].IsObject()) fields.fail(at, "expected an object");
      const Fields turn_fields((*turns)[k], fields.reader(), at + ".");
      turn_fields.allow_only({"text", "messages", "delay_ms", "max_tokens", "extra", "reply"});
      conversation.turns.push_back(parse_turn(turn_fields));
    }
  } else {
    fields.allow_only({"text", "messages", "max_tokens", "extra", "reply", "conversation_id"});
    conversation.turns.push_back(parse_turn(fields));
  }
  if (auto id = fields.id("conversation_id")) conversation.conversation_id = std::move(*id);
  return conversation;
}

// Fails when the finished conversation could not cross the wire: a generated reply over the
// string limit, or the whole over the conversation limit.
void check_wire(const proto::Conversation& conversation, const Fields& fields,
                const Config& config) {
  const size_t turns = conversation.turns.size();
  const bool multi = fields.has("turns");
  uint64_t generated = 0;
  for (size_t k = 0; k < turns; ++k) {
    const uint64_t reply = generated_reply_bytes(conversation.turns[k], k, turns, config);
    if (reply > proto::kMaxStringBytes) {
      fields.fail((multi ? "turns[" + std::to_string(k) + "]." : std::string()) + "max_tokens",
                  "with history: recorded the generated reply of " + describe_bytes(reply) +
                      " is longer than one string may be on the wire (" +
                      describe_bytes(proto::kMaxStringBytes) + ")");
    }
    generated += reply;
  }
  // The ids are not set yet: a correlation id is 36 bytes, a default id "conv-<index>" < 32.
  const uint64_t bytes = wire_bytes_bound(conversation, generated + 36 + 32);
  if (bytes > kMaxConversationWireBytes) {
    fields.fail(multi ? "turns" : "text", "the conversation would be " + describe_bytes(bytes) +
                                              " on the wire, more than one conversation may be (" +
                                              describe_bytes(kMaxConversationWireBytes) + ")");
  }
}

class JsonlDataset final : public Dataset {
 public:
  JsonlDataset(std::string source, std::shared_ptr<const RowSource> rows,
               std::vector<uint64_t> offsets, const Config& config, const Corpus& corpus)
      : source_(std::move(source)),
        rows_(std::move(rows)),
        offsets_(std::move(offsets)),
        config_(config),
        corpus_(corpus) {}

  uint64_t size() const override { return offsets_.size(); }
  int64_t start_ns(uint64_t /*index*/) const override { return 0; }

  proto::Conversation conversation(uint64_t index) const override {
    const uint64_t offset = offsets_.at(index);
    const JsonlReader reader(source_, offset);
    rapidjson::Document row;
    reader.parse_back(rows_->line_at(offset), row);
    proto::Conversation conversation = parse_row(Fields(row, reader));
    finish_file_conversation(conversation, index, config_, corpus_);
    return conversation;
  }

 private:
  std::string source_;
  std::shared_ptr<const RowSource> rows_;
  std::vector<uint64_t> offsets_;  // of each kept row's first byte
  Config config_;
  const Corpus& corpus_;
};

}  // namespace

std::unique_ptr<Dataset> index_jsonl_dataset(std::istream& in, const std::string& source,
                                             std::shared_ptr<const RowSource> rows,
                                             const Config& config, const Corpus& corpus) {
  check_file_draws(config);
  const uint64_t limit = file_conversation_limit(config);
  std::vector<uint64_t> offsets;
  uint64_t count = 0;
  std::unordered_map<IdHash, int64_t, IdHashHasher> id_lines;  // explicit id -> its line
  JsonlReader reader(in, source);
  rapidjson::Document row;
  while (reader.next(row)) {
    const Fields fields(row, reader);
    const proto::Conversation conversation = parse_row(fields);
    if (!conversation.conversation_id.empty()) {
      const auto [it, inserted] =
          id_lines.emplace(hash_id(conversation.conversation_id), reader.line());
      if (!inserted) {
        fields.fail("conversation_id", "\"" + conversation.conversation_id +
                                           "\" is already used on line " +
                                           std::to_string(it->second));
      }
    }
    check_wire(conversation, fields, config);
    if (count++ < limit) offsets.push_back(reader.offset());
  }
  if (count == 0) throw ConfigError(source + ": the dataset has no rows");
  offsets.shrink_to_fit();
  return std::make_unique<JsonlDataset>(source, std::move(rows), std::move(offsets), config,
                                        corpus);
}

std::unique_ptr<Dataset> open_jsonl_dataset(const std::string& path, const Config& config,
                                            const Corpus& corpus) {
  auto rows = open_row_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path");
  return index_jsonl_dataset(in, path, std::move(rows), config, corpus);
}

std::vector<proto::Conversation> parse_jsonl_dataset(std::istream& in, const std::string& source,
                                                     const Config& config, const Corpus& corpus) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream again(text);
  return materialize(
      *index_jsonl_dataset(again, source, row_text(std::move(text)), config, corpus));
}

}  // namespace convoy::controller
