#include "controller/dataset/jsonl_dataset.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "controller/config/limits.hpp"

namespace convoy::controller {

namespace {

// spawn_after_turn is at most this (a parent's turn count bounds it further).
constexpr int64_t kMaxSpawnAfterTurn = 1 << 20;
// Sub-agent rows in one family, bounded: a family runs on one worker, which starts the
// children of a turn together; 100,000 of them kept a worker from its heartbeats for over 3 s.
// The same bound as dataset.subagents.count.
constexpr auto kMaxFamilySubagents = static_cast<uint64_t>(limits::kMaxSubagents);

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
    fields.allow_only({"conversation_id", "turns", "parent", "spawn_after_turn"});
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
    fields.allow_only({"text", "messages", "max_tokens", "extra", "reply", "conversation_id",
                       "parent", "spawn_after_turn"});
    conversation.turns.push_back(parse_turn(fields));
  }
  if (auto id = fields.id("conversation_id")) conversation.conversation_id = std::move(*id);
  return conversation;
}

// A sub-agent row's link to its parent: "parent" (another row's conversation_id) and
// "spawn_after_turn" (1-based: the child starts when the parent's turn k has ended).
struct Link {
  std::string parent;
  uint32_t spawn_after_turn = 1;
};

std::optional<Link> parse_link(const Fields& fields, const std::string& own_id) {
  auto parent = fields.id("parent");
  const auto turn = fields.integer("spawn_after_turn", 1, kMaxSpawnAfterTurn,
                                   "no conversation has that many turns");
  if (!parent) {
    if (turn) {
      fields.fail("spawn_after_turn",
                  "only a sub-agent row is spawned after a turn: add \"parent\" (the "
                  "conversation_id of the row that spawns it)");
    }
    return std::nullopt;
  }
  if (!turn) {
    fields.fail("spawn_after_turn",
                "is required with \"parent\": the parent's turn (1-based) after which this "
                "sub-agent starts");
  }
  if (!own_id.empty() && *parent == own_id) {
    fields.fail("parent", "\"" + *parent + "\" is this row's own conversation_id");
  }
  return Link{std::move(*parent), static_cast<uint32_t>(*turn)};
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

// One sub-agent of a family as the dataset reads it back: its row and its link, by position.
struct FamilyChild {
  uint64_t offset = 0;            // of the row's first byte
  int32_t parent = -1;            // position in the family; -1 = the lead
  uint32_t spawn_after_turn = 1;  // 1 .. the parent's turns
};

// Families of the kept leads: lead i's sub-agents are children[begin[i] .. begin[i + 1]), in
// family order (parents before children). Both empty when no row names a parent.
struct Families {
  std::vector<uint64_t> begin;
  std::vector<FamilyChild> children;
};

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

// What the validating pass keeps of a row that names its conversation_id (a possible parent).
struct NamedRow {
  int64_t line = 0;
  uint32_t turns = 0;
  int64_t child = -1;  // index into the child rows; -1: a lead
  uint64_t lead = 0;   // a lead's ordinal among the leads
  uint64_t bytes = 0;  // its wire bound
};

// A row that names a parent, as the validating pass saw it.
struct ChildRow {
  uint64_t offset = 0;
  int64_t line = 0;
  Link link;
  uint64_t bytes = 0;
  // Resolved after the pass: the parent (a lead's ordinal, or a child row) and the root lead.
  int64_t parent_child = -1;
  uint64_t parent_lead = 0;
  uint64_t root = 0;
};

std::string at_line(const std::string& source, int64_t line) {
  return source + ":" + std::to_string(line) + ": ";
}

// Links every child row to its parent and its family's lead, in one pass over the child rows
// after the whole file was read (a parent may come after its children). Throws ConfigError at the
// child's line for an unknown parent, a spawn_after_turn beyond the parent's turns and a cycle.
void resolve_parents(std::vector<ChildRow>& children,
                     const std::unordered_map<IdHash, NamedRow, IdHashHasher>& named,
                     const std::string& source) {
  for (auto& child : children) {
    const auto it = named.find(hash_id(child.link.parent));
    if (it == named.end()) {
      throw ConfigError(at_line(source, child.line) + "parent: \"" + child.link.parent +
                        "\" is not the conversation_id of any row");
    }
    const NamedRow& parent = it->second;
    if (child.link.spawn_after_turn > parent.turns) {
      throw ConfigError(at_line(source, child.line) + "spawn_after_turn: " +
                        std::to_string(child.link.spawn_after_turn) + " is beyond the " +
                        std::to_string(parent.turns) + " turn(s) of its parent \"" +
                        child.link.parent + "\" (line " + std::to_string(parent.line) + ")");
    }
    child.parent_child = parent.child;
    child.parent_lead = parent.lead;
  }
  // Roots, by walking up; 0 = not yet, 1 = on the current walk, 2 = done.
  std::vector<uint8_t> state(children.size(), 0);
  std::vector<size_t> path;
  for (size_t start = 0; start < children.size(); ++start) {
    path.clear();
    size_t at = start;
    while (state[at] == 0) {
      state[at] = 1;
      path.push_back(at);
      if (children[at].parent_child < 0) break;
      at = static_cast<size_t>(children[at].parent_child);
    }
    if (state[at] == 1 && children[at].parent_child >= 0) {
      // `at` is on this walk and has a parent: the walk came back to it.
      std::string lines;
      const auto from = std::find(path.begin(), path.end(), at);
      for (auto p = from; p != path.end(); ++p) {
        lines += (lines.empty() ? "" : ", ") + std::to_string(children[*p].line);
      }
      throw ConfigError(at_line(source, children[at].line) + "parent: the rows on lines " + lines +
                        " are each other's parents in a cycle: a family needs a lead (a row "
                        "without \"parent\")");
    }
    const uint64_t root =
        children[at].parent_child < 0 ? children[at].parent_lead : children[at].root;
    for (const size_t p : path) {
      children[p].root = root;
      state[p] = 2;
    }
  }
}

// The kept leads' families in family order (depth first, siblings in file order), with each
// family's wire bound checked as a whole.
Families build_families(const std::vector<ChildRow>& children,
                        const std::unordered_map<IdHash, NamedRow, IdHashHasher>& named,
                        uint64_t kept_leads, const std::string& source) {
  Families families;
  if (children.empty()) return families;
  // Direct children of each lead and of each child row, in file order.
  std::unordered_map<uint64_t, std::vector<size_t>> of_lead;
  std::vector<std::vector<size_t>> of_child(children.size());
  for (size_t c = 0; c < children.size(); ++c) {
    if (children[c].root >= kept_leads) continue;
    if (children[c].parent_child < 0) {
      of_lead[children[c].parent_lead].push_back(c);
    } else {
      of_child[static_cast<size_t>(children[c].parent_child)].push_back(c);
    }
  }
  std::unordered_map<uint64_t, const NamedRow*> lead_rows;
  for (const auto& [hash, row] : named) {
    if (row.child < 0) lead_rows.emplace(row.lead, &row);
  }
  families.begin.reserve(kept_leads + 1);
  struct Pending {
    size_t child;
    int32_t parent;
  };
  std::vector<Pending> stack;
  for (uint64_t lead = 0; lead < kept_leads; ++lead) {
    families.begin.push_back(families.children.size());
    const auto direct = of_lead.find(lead);
    if (direct == of_lead.end()) continue;
    const NamedRow& lead_row = *lead_rows.at(lead);
    uint64_t bytes = lead_row.bytes;
    stack.clear();
    for (auto c = direct->second.rbegin(); c != direct->second.rend(); ++c)
      stack.push_back({*c, -1});
    const uint64_t first = families.children.size();
    while (!stack.empty()) {
      const Pending next = stack.back();
      stack.pop_back();
      const auto position = static_cast<int32_t>(families.children.size() - first);
      const ChildRow& row = children[next.child];
      families.children.push_back({row.offset, next.parent, row.link.spawn_after_turn});
      bytes += row.bytes;
      const auto& grand = of_child[next.child];
      for (auto g = grand.rbegin(); g != grand.rend(); ++g) stack.push_back({*g, position});
    }
    if (families.children.size() - first > kMaxFamilySubagents) {
      throw ConfigError(at_line(source, lead_row.line) + "conversation_id: its family has " +
                        std::to_string(families.children.size() - first) +
                        " sub-agent rows, more than " + std::to_string(kMaxFamilySubagents) +
                        " (a family runs on one worker; split it into several families)");
    }
    if (bytes > kMaxConversationWireBytes) {
      throw ConfigError(at_line(source, lead_row.line) + "conversation_id: its family (this row " +
                        "and " + std::to_string(families.children.size() - first) +
                        " sub-agent row(s)) would be " + describe_bytes(bytes) +
                        " on the wire, more than one conversation may be (" +
                        describe_bytes(kMaxConversationWireBytes) +
                        "): a family crosses to its worker in one piece");
    }
  }
  families.begin.push_back(families.children.size());
  families.children.shrink_to_fit();
  return families;
}

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
  JsonlReader reader(in, source);
  rapidjson::Document row;
  while (reader.next(row)) {
    ++count;
    const Fields fields(row, reader);
    const proto::Conversation conversation = parse_row(fields);
    auto link = parse_link(fields, conversation.conversation_id);
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
      children.push_back({reader.offset(), reader.line(), std::move(*link), bytes});
      continue;
    }
    if (leads++ < limit) offsets.push_back(reader.offset());
  }
  if (count == 0) throw ConfigError(source + ": the dataset has no rows");
  // Every row naming a parent means an unknown parent or a cycle: resolve_parents says which.
  resolve_parents(children, named, source);
  Families families = build_families(children, named, offsets.size(), source);
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
