#include "controller/dataset/mooncake.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "common/duration.hpp"
#include "controller/config/limits.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/rng.hpp"
#include "controller/dataset/trace_replay.hpp"

namespace convoy::controller {

namespace {

// A row's prompt before its text is built (text is built only for the rows kept).
struct PromptSpec {
  int64_t input_length = 0;  // 0 when the row gave text_input or messages
  std::vector<uint64_t> hash_ids;
};

// One row, parsed: its turn (text not built yet) and what groups and schedules it.
struct MooncakeRow {
  proto::Turn turn;
  PromptSpec spec;
  std::optional<double> timestamp_ms;
  std::optional<std::string> session;
  std::optional<std::string> parent;  // parent_session_id: a sub-agent's first row
  uint32_t spawn_after_turn = 0;      // with parent: 1 .. the parent's rows
};

// A sub-agent's own keys on its session's first row (convoy's, not Mooncake's: the agent-trace
// mappings write them). They need each other and session_id; a timestamp does not apply.
void parse_subagent_keys(const Fields& fields, MooncakeRow& row) {
  row.parent = fields.id("parent_session_id");
  const auto spawn = fields.integer("spawn_after_turn", 1, std::numeric_limits<uint32_t>::max(),
                                    "a turn number has 32 bits");
  if (!row.parent && !spawn) return;
  if (!row.parent) fields.fail("spawn_after_turn", "only allowed with \"parent_session_id\"");
  if (!spawn) {
    fields.fail("parent_session_id",
                "needs \"spawn_after_turn\": after which of the parent's turns it starts");
  }
  if (!row.session) {
    fields.fail("parent_session_id", "needs \"session_id\": the sub-agent's own session");
  }
  if (*row.parent == *row.session) {
    fields.fail("parent_session_id", "names the row's own session");
  }
  if (row.timestamp_ms) {
    fields.fail("timestamp",
                "not allowed on a sub-agent's row: it starts when its parent's turn "
                "spawn_after_turn has ended");
  }
  row.spawn_after_turn = static_cast<uint32_t>(*spawn);
}

MooncakeRow parse_row(const Fields& fields, int64_t block_tokens) {
  fields.allow_only({"timestamp", "input_length", "text_input", "messages", "output_length",
                     "hash_ids", "session_id", "delay", "extra", "parent_session_id",
                     "spawn_after_turn"});
  MooncakeRow row;
  proto::Turn& turn = row.turn;
  PromptSpec& spec = row.spec;
  const auto block = static_cast<double>(block_tokens);
  const int inputs = static_cast<int>(fields.has("input_length")) +
                     static_cast<int>(fields.has("text_input")) +
                     static_cast<int>(fields.has("messages"));
  if (inputs != 1) {
    fields.fail("input_length",
                "exactly one of \"input_length\", \"text_input\" or "
                "\"messages\" is required");
  }
  if (auto length = fields.integer("input_length", 1, kMaxInputLengthTokens,
                                   "a prompt crosses the wire as one string of at most " +
                                       describe_bytes(proto::kMaxStringBytes))) {
    spec.input_length = *length;
    turn.input_tokens_est = *length;
    spec.hash_ids = fields.id_list("hash_ids").value_or(std::vector<uint64_t>{});
    const auto blocks = static_cast<double>(spec.hash_ids.size());
    if (!spec.hash_ids.empty() && static_cast<double>(*length) <= (blocks - 1) * block) {
      fields.fail("input_length", std::to_string(*length) + " leaves the last of " +
                                      std::to_string(spec.hash_ids.size()) +
                                      " hash_ids empty (blocks of " + std::to_string(block_tokens) +
                                      " tokens)");
    }
  } else if (fields.has("hash_ids")) {
    fields.fail("hash_ids", "only allowed with \"input_length\"");
  } else if (auto text = fields.string("text_input", true)) {
    turn.user_text = std::move(*text);
    turn.input_tokens_est = estimate_tokens(turn.user_text);
  } else {
    turn.messages_json = *fields.messages_json("messages", turn.input_tokens_est);
  }
  turn.max_tokens = fields.integer("output_length", 1).value_or(kUnsetMaxTokens);
  turn.delay_ms = fields.number("delay", 0, kMaxDelayMs, "about 11.6 days").value_or(kUnsetDelayMs);
  turn.extra_json = fields.object_json("extra").value_or("");
  row.timestamp_ms = fields.number("timestamp", 0, kMaxTimestampMs,
                                   "a finite number of milliseconds; Unix-epoch ms fit");
  row.session = fields.id("session_id");
  parse_subagent_keys(fields, row);
  return row;
}

// Blocks for the hash ids (the last one cut to what input_length leaves), then seeded prose for
// tokens beyond the blocks. Without hash ids the text starts with a tag naming the conversation
// and turn, so unrelated rows never share a prefix by accident.
std::string build_prompt(const PromptSpec& spec, uint64_t seed, uint64_t index, uint64_t member,
                         uint64_t turn, const Corpus& corpus, int64_t block_tokens) {
  const size_t total_bytes = bytes_for_tokens(spec.input_length);
  std::string text;
  text.reserve(total_bytes);
  for (const uint64_t id : spec.hash_ids) {
    const size_t room = total_bytes - text.size();
    const std::string block = mooncake_block_text(seed, id, corpus, block_tokens);
    text.append(block, 0, std::min(room, block.size()));
  }
  if (spec.hash_ids.empty()) {
    text = "[c" + std::to_string(index) + (member == 0 ? "" : "s" + std::to_string(member)) + "t" +
           std::to_string(turn) + "] ";
  }
  if (text.size() < total_bytes) {
    // A sub-agent's prose on streams of its own: member 0 (the lead) keeps the lead's draws.
    Rng rng(seed, index, (member << 32) | turn, Stream::kText);
    corpus.append_excerpt(text, rng.next_u64(), total_bytes - text.size());
  }
  return text;
}

}  // namespace

std::string mooncake_block_text(uint64_t seed, uint64_t hash_id, const Corpus& corpus,
                                int64_t block_tokens) {
  const size_t bytes = bytes_for_tokens(block_tokens);
  // The id leads the block: distinct ids never collide even when their corpus offsets do.
  std::string text = "[" + std::to_string(hash_id) + "] ";
  if (text.size() >= bytes) return text.substr(0, bytes);
  Rng rng(seed, hash_id, Stream::kBlock);
  corpus.append_excerpt(text, rng.next_u64(), bytes - text.size());
  return text;
}

namespace {

// One session of a family as its rows are read back: member 0 is the lead, a sub-agent's parent
// comes before it (the index checked that the parent's session is earlier in the file).
struct Member {
  std::string session;
  int32_t parent = 0;  // member index of the parent (sub-agents only)
  uint32_t spawn_after_turn = 0;
  std::vector<proto::Turn> turns;
  std::vector<PromptSpec> prompts;
};

// The member `row` belongs to, added when its session is new; `index_of` maps a session to its
// member.
Member& member_of(std::vector<Member>& members, std::unordered_map<std::string, size_t>& index_of,
                  const MooncakeRow& row) {
  if (row.session) {
    if (auto it = index_of.find(*row.session); it != index_of.end()) return members[it->second];
    index_of.emplace(*row.session, members.size());
  }
  Member member;
  member.session = row.session.value_or("");
  if (row.parent) {
    member.parent = static_cast<int32_t>(index_of.at(*row.parent));
    member.spawn_after_turn = row.spawn_after_turn;
  }
  members.push_back(std::move(member));
  return members.back();
}

class MooncakeDataset final : public Dataset {
 public:
  MooncakeDataset(std::string source, std::shared_ptr<const RowSource> rows,
                  std::vector<uint64_t> row_offsets, std::vector<uint64_t> first_row,
                  std::vector<int64_t> start_ns, const Config& config, const Corpus& corpus,
                  int64_t block_tokens)
      : source_(std::move(source)),
        rows_(std::move(rows)),
        row_offsets_(std::move(row_offsets)),
        first_row_(std::move(first_row)),
        start_ns_(std::move(start_ns)),
        config_(config),
        replay_(TraceReplay::from(config.load.trace)),
        corpus_(corpus),
        block_tokens_(block_tokens) {}

  uint64_t size() const override { return first_row_.size() - 1; }
  int64_t start_ns(uint64_t index) const override {
    return start_ns_.empty() ? 0 : start_ns_.at(index);
  }

  proto::Conversation conversation(uint64_t index) const override {
    std::vector<Member> members;
    std::unordered_map<std::string, size_t> index_of;
    for (uint64_t r = first_row_.at(index); r < first_row_.at(index + 1); ++r) {
      const JsonlReader reader(source_, row_offsets_[r]);
      rapidjson::Document document;
      reader.parse_back(rows_->line_at(row_offsets_[r]), document);
      MooncakeRow row = parse_row(Fields(document, reader), block_tokens_);
      Member& member = member_of(members, index_of, row);
      if (!start_ns_.empty() && row.turn.delay_ms != kUnsetDelayMs) {
        row.turn.delay_ms = replay_.delay_ms(row.turn.delay_ms);  // load.trace's speedup
      }
      member.turns.push_back(std::move(row.turn));
      member.prompts.push_back(std::move(row.spec));
    }
    for (size_t m = 0; m < members.size(); ++m) {
      Member& member = members[m];
      for (size_t k = 0; k < member.prompts.size(); ++k) {
        if (member.prompts[k].input_length > 0) {
          member.turns[k].user_text =
              build_prompt(member.prompts[k], config_.seed, index, m, k, corpus_, block_tokens_);
        }
      }
    }
    proto::Conversation conversation;
    conversation.conversation_id = std::move(members[0].session);
    conversation.turns = std::move(members[0].turns);
    conversation.start_ns = start_ns(index);
    finish_file_conversation(conversation, index, config_, corpus_);
    for (size_t m = 1; m < members.size(); ++m) {
      proto::SubAgent subagent;
      subagent.conversation_id = std::move(members[m].session);
      subagent.parent = members[m].parent - 1;  // the lead is -1, member m is subagents[m - 1]
      subagent.spawn_after_turn = members[m].spawn_after_turn;
      subagent.turns = std::move(members[m].turns);
      finish_file_subagent(subagent, index, m - 1, conversation.conversation_id, config_, corpus_);
      conversation.subagents.push_back(std::move(subagent));
    }
    return conversation;
  }

 private:
  std::string source_;
  std::shared_ptr<const RowSource> rows_;
  std::vector<uint64_t> row_offsets_;  // every kept row, grouped by conversation, file order
  std::vector<uint64_t> first_row_;    // conversation i: row_offsets_[first_row_[i], [i + 1])
  std::vector<int64_t> start_ns_;      // load.mode trace only, else empty
  Config config_;
  TraceReplay replay_;
  const Corpus& corpus_;
  int64_t block_tokens_;
};

std::string ms_text(double ms) {
  std::ostringstream out;
  out << ms;
  return out.str();
}

// A kept row: its offset in the file and its conversation's slot among the kept.
struct RowRef {
  uint64_t offset;
  uint64_t slot;
};

constexpr uint64_t kDroppedConversation = std::numeric_limits<uint64_t>::max();

// Every conversation's first row in file order: which are kept (dataset.conversations, and in
// trace mode load.trace's window) and, in trace mode, their starts. A trace's conversations must
// start in time order: its first timestamp is trace time 0.
class ConversationStarts {
 public:
  ConversationStarts(const Config& config, uint64_t limit)
      : trace_mode_(config.load.mode == LoadMode::kTrace),
        replay_(TraceReplay::from(config.load.trace)),
        limit_(limit) {}

  // The next conversation, opened by `row` (at fields' line): its index among the kept, or
  // kDroppedConversation. Throws ConfigError for a missing or backwards timestamp.
  uint64_t add(const MooncakeRow& row, const Fields& fields, int64_t line) {
    uint64_t index = kDroppedConversation;
    if (!trace_mode_) {
      if (kept_ < limit_) index = kept_++;
      kept_of_.push_back(index);
      return index;
    }
    if (!row.timestamp_ms) {
      fields.fail("timestamp", "required on a conversation's first row with load.mode trace");
    }
    const double ms = *row.timestamp_ms;
    if (previous_ && ms < previous_->ms) {
      fields.fail("timestamp", ms_text(ms) + " is earlier than the conversation before it (line " +
                                   std::to_string(previous_->line) + ": " + ms_text(previous_->ms) +
                                   "): a trace's conversations must start in time order (sort "
                                   "the file by timestamp)");
    }
    if (!previous_) origin_ms_ = ms;
    previous_ = Start{ms, line};
    if (kept_ < limit_ && replay_.keeps(ms_to_ns(ms - origin_ms_))) {
      if (kept_ == 0) first_kept_ = previous_;
      last_kept_ = previous_;
      index = kept_++;
      trace_ns_.push_back(ms_to_ns(ms - origin_ms_));
    }
    kept_of_.push_back(index);
    return index;
  }

  uint64_t kept_of(uint64_t slot) const { return kept_of_[slot]; }
  uint64_t kept() const { return kept_; }

  // Trace mode: the intended starts of the kept conversations (load.trace applied); else empty.
  // A kept span over kMaxTraceSpanMs is refused, naming the line of the latest.
  std::vector<int64_t> starts_ns(const std::string& source) const {
    if (!trace_mode_ || !first_kept_) return {};
    if (last_kept_->ms - first_kept_->ms > kMaxTraceSpanMs) {
      throw ConfigError(source + ":" + std::to_string(last_kept_->line) +
                        ": timestamp: " + ms_text(last_kept_->ms) + " is " +
                        ms_text(last_kept_->ms - first_kept_->ms) +
                        " ms after the earliest first-row timestamp (line " +
                        std::to_string(first_kept_->line) + "); a trace may span at most " +
                        ms_text(kMaxTraceSpanMs) + " ms (about 31.7 years)");
    }
    return replay_starts_ns(trace_ns_, replay_);
  }

  // Trace mode with a window that keeps nothing: what the message says of the trace.
  std::optional<std::string> empty_window(const std::string& source) const {
    if (!trace_mode_ || kept_ > 0 || !previous_) return std::nullopt;
    const auto& t = replay_;
    return source + ": load.trace: the window [" +
           ms_text(static_cast<double>(t.start_offset_ns) / 1e9) + " s, " +
           (t.end_offset_ns ? ms_text(static_cast<double>(*t.end_offset_ns) / 1e9) + " s"
                            : std::string("end")) +
           ") keeps no conversation: the trace's starts span 0 to " +
           ms_text((previous_->ms - origin_ms_) / 1e3) + " s of trace time";
  }

 private:
  struct Start {
    double ms = 0;
    int64_t line = 0;
  };
  bool trace_mode_;
  TraceReplay replay_;
  uint64_t limit_;
  uint64_t kept_ = 0;
  std::vector<uint64_t> kept_of_;  // per conversation in file order
  std::vector<int64_t> trace_ns_;  // trace mode: kept conversations' trace times
  double origin_ms_ = 0;           // trace mode: the first conversation's timestamp
  std::optional<Start> previous_;  // the last conversation opened
  std::optional<Start> first_kept_;
  std::optional<Start> last_kept_;
};

// Which family (conversation slot) each row belongs to: a session's rows share one, and a
// session whose first row names parent_session_id joins its parent's. Sessions are keyed by their
// id's hash (two 64-bit hashes; the ids themselves are not kept).
class FamilyIndex {
 public:
  struct Placed {
    uint64_t slot = 0;
    bool new_family = false;  // the row opens a conversation (a lead, or a row without session)
    bool new_member = false;  // the row opens a sub-agent of an earlier family
  };

  // `next_slot` is the slot a new family gets.
  Placed place(const MooncakeRow& row, const Fields& fields, int64_t line, uint64_t next_slot) {
    if (!row.session) return Placed{next_slot, true, false};
    const IdHash id = hash_id(*row.session);
    if (auto it = sessions_.find(id); it != sessions_.end()) {
      if (row.parent) {
        fields.fail("parent_session_id", "only allowed on a session's first row (line " +
                                             std::to_string(it->second.line) + ")");
      }
      ++it->second.rows;
      return Placed{it->second.slot, false, false};
    }
    if (!row.parent) {
      sessions_.emplace(id, Session{next_slot, line, 1});
      subagents_.push_back(0);
      return Placed{next_slot, true, false};
    }
    const auto parent = sessions_.find(hash_id(*row.parent));
    if (parent == sessions_.end()) {
      fields.fail("parent_session_id", "\"" + *row.parent +
                                           "\" is no earlier session of the file (a sub-agent's "
                                           "parent's rows come first)");
    }
    const uint64_t slot = parent->second.slot;
    if (static_cast<double>(++subagents_[slot]) > limits::kMaxSubagents) {
      fields.fail("parent_session_id",
                  "its family has more than " +
                      std::to_string(static_cast<int64_t>(limits::kMaxSubagents)) +
                      " sub-agents (a family runs on one worker; split it)");
    }
    spawns_.push_back(Spawn{line, parent->second.line, parent->first, row.spawn_after_turn});
    sessions_.emplace(id, Session{slot, line, 1});
    return Placed{slot, false, true};
  }

  // After the pass: each sub-agent's spawn_after_turn names a turn its parent has.
  void check_spawns(const std::string& source) const {
    for (const Spawn& spawn : spawns_) {
      const uint64_t rows = sessions_.at(spawn.parent).rows;
      if (spawn.after_turn > rows) {
        throw ConfigError(source + ":" + std::to_string(spawn.line) +
                          ": spawn_after_turn: " + std::to_string(spawn.after_turn) +
                          " but the parent session (line " + std::to_string(spawn.parent_line) +
                          ") has " + std::to_string(rows) + " row(s), one per turn");
      }
    }
  }

 private:
  struct Session {
    uint64_t slot;
    int64_t line;   // its first row
    uint64_t rows;  // its turns so far
  };
  struct Spawn {
    int64_t line;         // the sub-agent's first row
    int64_t parent_line;  // the parent's first row
    IdHash parent;
    uint32_t after_turn;
  };
  std::unordered_map<IdHash, Session, IdHashHasher> sessions_;
  std::vector<uint64_t> subagents_;  // per family slot
  std::vector<Spawn> spawns_;
};

// The kept rows' offsets grouped by conversation, file order within each (a counting sort).
// Sets first_row: conversation i's rows are [first_row[i], first_row[i + 1]).
std::vector<uint64_t> group_rows(const std::vector<RowRef>& kept_rows, uint64_t kept,
                                 std::vector<uint64_t>& first_row) {
  first_row.assign(kept + 1, 0);
  for (const RowRef& r : kept_rows) ++first_row[r.slot + 1];
  for (uint64_t i = 0; i < kept; ++i) first_row[i + 1] += first_row[i];
  std::vector<uint64_t> row_offsets(kept_rows.size());
  std::vector<uint64_t> next(first_row.begin(), first_row.end() - 1);
  for (const RowRef& r : kept_rows) row_offsets[next[r.slot]++] = r.offset;
  return row_offsets;
}

}  // namespace

std::unique_ptr<Dataset> index_mooncake_trace(std::istream& in, const std::string& source,
                                              std::shared_ptr<const RowSource> rows,
                                              const Config& config, const Corpus& corpus,
                                              int64_t block_tokens) {
  check_file_draws(config);
  ConversationStarts starts(config, file_conversation_limit(config));
  std::vector<RowRef> kept_rows;     // rows of kept conversations, file order
  std::vector<uint64_t> wire_bytes;  // per conversation: its Assign entry so far
  FamilyIndex families;
  // The ids are set later: a correlation id is 36 bytes, a default id "conv-<index>" < 32.
  const uint64_t fresh_bytes = wire_bytes_bound(proto::Conversation{}, 36 + 32);

  JsonlReader reader(in, source);
  rapidjson::Document document;
  while (reader.next(document)) {
    const Fields fields(document, reader);
    const MooncakeRow row = parse_row(fields, block_tokens);
    const FamilyIndex::Placed placed =
        families.place(row, fields, reader.line(), wire_bytes.size());
    const uint64_t slot = placed.slot;
    if (placed.new_family) {
      starts.add(row, fields, reader.line());
      wire_bytes.push_back(fresh_bytes + (row.session ? row.session->size() : 0));
    } else if (placed.new_member) {
      wire_bytes[slot] += subagent_wire_bytes_bound(proto::SubAgent{}) + 36 + row.session->size();
    }
    // What this row adds on the wire: its turn, the prompt still to be generated, and (history:
    // recorded) a reply (counted for every row: a session's last row is not known yet).
    const uint64_t reply = generated_reply_bytes(row.turn, 0, 2, config);
    if (reply > proto::kMaxStringBytes) {
      fields.fail("output_length", "with history: recorded the generated reply of " +
                                       describe_bytes(reply) +
                                       " is longer than one string may be on the wire (" +
                                       describe_bytes(proto::kMaxStringBytes) + ")");
    }
    wire_bytes[slot] +=
        turn_wire_bytes_bound(row.turn) + bytes_for_tokens(row.spec.input_length) + reply;
    if (wire_bytes[slot] > kMaxConversationWireBytes) {
      fields.fail(
          row.session ? "session_id" : "input_length",
          "the conversation reaches " + describe_bytes(wire_bytes[slot]) +
              " on the wire with this row, more than one conversation may be (" +
              describe_bytes(kMaxConversationWireBytes) + ")" +
              (placed.new_family ? "" : " (with its sub-agents: a family crosses in one piece)"));
    }
    if (const uint64_t kept = starts.kept_of(slot); kept != kDroppedConversation) {
      kept_rows.push_back(RowRef{reader.offset(), kept});
    }
  }
  if (wire_bytes.empty()) throw ConfigError(source + ": the trace has no rows");
  if (auto why = starts.empty_window(source)) throw ConfigError(*why);
  families.check_spawns(source);
  wire_bytes = {};
  families = {};

  std::vector<int64_t> start_ns = starts.starts_ns(source);
  std::vector<uint64_t> first_row;
  std::vector<uint64_t> row_offsets = group_rows(kept_rows, starts.kept(), first_row);
  return std::make_unique<MooncakeDataset>(source, std::move(rows), std::move(row_offsets),
                                           std::move(first_row), std::move(start_ns), config,
                                           corpus, block_tokens);
}

std::unique_ptr<Dataset> open_mooncake_trace(const std::string& path, const Config& config,
                                             const Corpus& corpus) {
  auto rows = open_row_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path");
  return index_mooncake_trace(in, path, std::move(rows), config, corpus);
}

std::vector<proto::Conversation> parse_mooncake_trace(std::istream& in, const std::string& source,
                                                      const Config& config, const Corpus& corpus,
                                                      int64_t block_tokens) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream again(text);
  return materialize(*index_mooncake_trace(again, source, row_text(std::move(text)), config, corpus,
                                           block_tokens));
}

}  // namespace convoy::controller
