#include "controller/dataset/jsonl_dataset.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "controller/dataset/jsonl_families.hpp"

namespace convoy::controller {

namespace {

// spawn_after_turn is at most this (a parent's turn count bounds it further).
constexpr int64_t kMaxSpawnAfterTurn = 1 << 20;
// Ids in one wait_for, bounded (a family's sub-agents are bounded the same way).
constexpr rapidjson::SizeType kMaxWaitIds = 10'000;

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

// A row's conversation before finish_file_conversation (ids and draws unset). The family keys
// (parent, spawn_after_turn) are read by parse_link.
proto::Conversation parse_row(const Fields& fields) {
  proto::Conversation conversation;
  if (fields.has("turns")) {
    fields.allow_only({"conversation_id", "turns", "parent", "spawn_after_turn", "wait_for"});
    const auto* turns = fields.get("turns");
    if (!turns->IsArray()) fields.fail("turns", "expected an array of turns");
    if (turns->Empty()) fields.fail("turns", "must not be empty");
    for (rapidjson::SizeType k = 0; k < turns->Size(); ++k) {
      const std::string at = "turns[" + std::to_string(k) + "]";
      if (!(*turns)[k].IsObject()) fields.fail(at, "expected an object");
      const Fields turn_fields((*turns)[k], fields.reader(), at + ".");
      turn_fields.allow_only(
          {"text", "messages", "delay_ms", "max_tokens", "extra", "reply", "wait_for"});
      conversation.turns.push_back(parse_turn(turn_fields));
    }
  } else {
    fields.allow_only({"text", "messages", "max_tokens", "extra", "reply", "conversation_id",
                       "parent", "spawn_after_turn", "wait_for"});
    conversation.turns.push_back(parse_turn(fields));
  }
  if (auto id = fields.id("conversation_id")) conversation.conversation_id = std::move(*id);
  return conversation;
}

// One "wait_for": a non-empty array of other rows' conversation_ids (strings, or integers
// written as their text), none twice, never the row's own.
std::vector<std::string> parse_wait_ids(const Fields& fields, const std::string& own_id) {
  std::vector<std::string> ids;
  const auto* v = fields.get("wait_for");
  if (v == nullptr) return ids;
  if (!v->IsArray()) {
    fields.fail("wait_for", "expected an array of conversation_ids (the rows this one waits for)");
  }
  if (v->Empty()) fields.fail("wait_for", "must name at least one conversation_id");
  if (v->Size() > kMaxWaitIds) {
    fields.fail("wait_for", "names " + std::to_string(v->Size()) + " rows, more than " +
                                std::to_string(kMaxWaitIds));
  }
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    const rapidjson::Value& e = (*v)[i];
    const std::string key = "wait_for[" + std::to_string(i) + "]";
    std::string id;
    if (e.IsString() && e.GetStringLength() > 0) {
      id.assign(e.GetString(), e.GetStringLength());
    } else if (e.IsInt64()) {
      id = std::to_string(e.GetInt64());
    } else {
      fields.fail(key, "expected a conversation_id (a non-empty string, or an integer)");
    }
    if (!own_id.empty() && id == own_id) {
      fields.fail(key, "\"" + id +
                           "\" is this row's own conversation_id: a row cannot wait for "
                           "itself");
    }
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      fields.fail(key, "\"" + id + "\" is listed twice");
    }
    ids.push_back(std::move(id));
  }
  return ids;
}

// Every wait of a row: its own "wait_for" (turn 0) and each turns[k].wait_for (k >= 1; the
// first turn's wait is the row's).
std::vector<WaitRef> parse_waits(const Fields& fields, const std::string& own_id) {
  std::vector<WaitRef> waits;
  for (std::string& id : parse_wait_ids(fields, own_id)) waits.push_back({0, std::move(id)});
  const auto* turns = fields.get("turns");
  if (turns == nullptr) return waits;
  for (rapidjson::SizeType k = 0; k < turns->Size(); ++k) {
    const std::string at = "turns[" + std::to_string(k) + "].";
    const Fields turn_fields((*turns)[k], fields.reader(), at);
    if (k == 0 && turn_fields.has("wait_for")) {
      turn_fields.fail("wait_for",
                       "the first turn's wait is the row's: write \"wait_for\" on "
                       "the row");
    }
    for (std::string& id : parse_wait_ids(turn_fields, own_id)) waits.push_back({k, std::move(id)});
  }
  return waits;
}

// A row's links: "parent" and "spawn_after_turn" (1-based: the child starts when the parent's
// turn k has ended) and its waits. nullopt: a lead (no parent, no wait at its start); a lead's
// turn waits are returned in `lead_waits`.
std::optional<Link> parse_link(const Fields& fields, const std::string& own_id,
                               std::vector<WaitRef>& lead_waits) {
  auto parent = fields.id("parent");
  const auto turn = fields.integer("spawn_after_turn", 1, kMaxSpawnAfterTurn,
                                   "no conversation has that many turns");
  std::vector<WaitRef> waits = parse_waits(fields, own_id);
  const bool waits_to_start = !waits.empty() && waits.front().turn == 0;
  if (!parent) {
    if (turn) {
      fields.fail("spawn_after_turn",
                  "only a sub-agent row is spawned after a turn: add \"parent\" (the "
                  "conversation_id of the row that spawns it)");
    }
    if (!waits_to_start) {
      lead_waits = std::move(waits);
      return std::nullopt;
    }
    // Spawned by no turn: it starts when its waits are met; its anchor is the first of them.
    std::string anchor = waits.front().id;
    return Link{std::move(anchor), 0, std::move(waits)};
  }
  if (!turn) {
    fields.fail("spawn_after_turn",
                "is required with \"parent\": the parent's turn (1-based) after which this "
                "sub-agent starts");
  }
  if (!own_id.empty() && *parent == own_id) {
    fields.fail("parent", "\"" + *parent + "\" is this row's own conversation_id");
  }
  return Link{std::move(*parent), static_cast<uint32_t>(*turn), std::move(waits)};
}
// Fails when the finished conversation could not cross the wire: a generated reply over the
// string limit, or the whole over the conversation limit. Returns the bound it judged (the
// family check adds the rows of a family together).
uint64_t check_wire(const proto::Conversation& conversation, const Fields& fields,
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
  return bytes;
}

class JsonlDataset final : public Dataset {
 public:
  JsonlDataset(std::string source, std::shared_ptr<const RowSource> rows,
               std::vector<uint64_t> offsets, Families families, const Config& config,
               const Corpus& corpus)
      : source_(std::move(source)),
        rows_(std::move(rows)),
        offsets_(std::move(offsets)),
        families_(std::move(families)),
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
    if (families_.begin.empty()) return conversation;
    const uint64_t first = families_.begin.at(index);
    const uint64_t end = families_.begin.at(index + 1);
    for (uint64_t c = first; c < end; ++c) {
      const FamilyChild& child = families_.children[c];
      const JsonlReader child_reader(source_, child.offset);
      rapidjson::Document child_row;
      child_reader.parse_back(rows_->line_at(child.offset), child_row);
      proto::Conversation parsed = parse_row(Fields(child_row, child_reader));
      proto::SubAgent subagent;
      subagent.conversation_id = std::move(parsed.conversation_id);
      subagent.parent = child.parent;
      subagent.spawn_after_turn = child.spawn_after_turn;
      subagent.turns = std::move(parsed.turns);
      finish_file_subagent(subagent, index, c - first, conversation.conversation_id, config_,
                           corpus_);
      conversation.subagents.push_back(std::move(subagent));
    }
    if (!families_.fan_begin.empty()) {
      conversation.fan_in.assign(
          families_.fan_in.begin() + static_cast<std::ptrdiff_t>(families_.fan_begin.at(index)),
          families_.fan_in.begin() +
              static_cast<std::ptrdiff_t>(families_.fan_begin.at(index + 1)));
    }
    return conversation;
  }

 private:
  std::string source_;
  std::shared_ptr<const RowSource> rows_;
  std::vector<uint64_t> offsets_;  // of each kept lead row's first byte
  Families families_;
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
  uint64_t leads = 0;
  uint64_t count = 0;
  std::unordered_map<IdHash, NamedRow, IdHashHasher> named;  // explicit id -> its row
  std::vector<ChildRow> children;
  std::vector<LeadWait> lead_waits;  // a lead's turns that wait (turns[k].wait_for)
  std::vector<WaitRef> waits;
  JsonlReader reader(in, source);
  rapidjson::Document row;
  while (reader.next(row)) {
    ++count;
    const Fields fields(row, reader);
    const proto::Conversation conversation = parse_row(fields);
    waits.clear();
    auto link = parse_link(fields, conversation.conversation_id, waits);
    const uint64_t bytes = check_wire(conversation, fields, config);
    if (!conversation.conversation_id.empty()) {
      NamedRow entry{reader.line(), static_cast<uint32_t>(conversation.turns.size()),
                     link ? static_cast<int64_t>(children.size()) : -1, leads, bytes};
      const auto [it, inserted] = named.emplace(hash_id(conversation.conversation_id), entry);
      if (!inserted) {
        fields.fail("conversation_id", "\"" + conversation.conversation_id +
                                           "\" is already used on line " +
                                           std::to_string(it->second.line));
      }
    }
    if (link) {
      const auto turns = static_cast<uint32_t>(conversation.turns.size());
      children.push_back({reader.offset(), reader.line(), std::move(*link), bytes, turns});
      continue;
    }
    for (WaitRef& w : waits) lead_waits.push_back({leads, reader.line(), std::move(w)});
    if (leads++ < limit) offsets.push_back(reader.offset());
  }
  if (count == 0) throw ConfigError(source + ": the dataset has no rows");
  // Every row naming a parent means an unknown parent or a cycle: resolve_parents says which.
  resolve_parents(children, named, source);
  check_wait_families(children, lead_waits, named, source);
  Families families = build_families(children, lead_waits, named, leads, offsets.size(), source);
  offsets.shrink_to_fit();
  return std::make_unique<JsonlDataset>(source, std::move(rows), std::move(offsets),
                                        std::move(families), config, corpus);
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
