#include "controller/dataset/aiperf_jsonl.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace convoy::controller {

namespace {

// The texts of "texts": strings, or AIPerf Text objects {"name", "contents": [strings]}.
std::vector<std::string> read_texts(const Fields& fields) {
  const auto* texts = fields.get("texts");
  if (!texts->IsArray()) fields.fail("texts", "expected an array of strings or {name, contents}");
  std::vector<std::string> out;
  for (rapidjson::SizeType i = 0; i < texts->Size(); ++i) {
    const std::string at = "texts[" + std::to_string(i) + "]";
    const auto& item = (*texts)[i];
    if (item.IsString()) {
      out.emplace_back(item.GetString(), item.GetStringLength());
      continue;
    }
    if (!item.IsObject()) fields.fail(at, "expected a string or {\"name\", \"contents\"}");
    const Fields text(item, fields.reader(), at + ".");
    text.allow_only({"name", "contents"});
    const auto* contents = text.get("contents");
    if (contents == nullptr || !contents->IsArray()) {
      text.fail("contents", "expected an array of strings");
    }
    for (rapidjson::SizeType k = 0; k < contents->Size(); ++k) {
      const auto& c = (*contents)[k];
      if (!c.IsString()) text.fail("contents[" + std::to_string(k) + "]", "expected a string");
      out.emplace_back(c.GetString(), c.GetStringLength());
    }
  }
  // AIPerf leaves empty contents out of the request.
  out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
  if (out.empty()) fields.fail("texts", "no non-empty text");
  return out;
}

// One user message whose content is a text part per text (what AIPerf sends for several texts).
std::string text_parts_message(const std::vector<std::string>& texts) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  w.StartObject();
  w.Key("role");
  w.String("user");
  w.Key("content");
  w.StartArray();
  for (const auto& t : texts) {
    w.StartObject();
    w.Key("type");
    w.String("text");
    w.Key("text");
    w.String(t.data(), static_cast<rapidjson::SizeType>(t.size()));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void reject_unsupported(const Fields& fields, std::string_view type) {
  for (const char* media :
       {"image", "images", "image_uuids", "audio", "audios", "video", "videos"}) {
    if (fields.has(media)) {
      fields.fail(media,
                  "convoy sends text only: an AIPerf image, audio or video turn has no "
                  "convoy equivalent (drop the field, or use dataset.type jsonl with "
                  "\"messages\" holding the content parts)");
    }
  }
  if (fields.has("timestamp")) {
    fields.fail("timestamp",
                "convoy replays timestamps from mooncake traces only (dataset.type mooncake, "
                "load.mode trace); use \"delay\" (ms after the previous turn) here");
  }
  if (auto role = fields.string("role", false); role && *role != "user") {
    fields.fail("role", "\"" + *role + "\": convoy sends every turn as the user's message");
  }
  if (auto t = fields.string("type", false); t && *t != type) {
    fields.fail("type", "\"" + *t + "\" in a dataset.type aiperf_" + std::string(type) + " file");
  }
}

// One SingleTurn object as a convoy turn (delay and max_tokens unset when absent).
proto::Turn parse_aiperf_turn(const Fields& fields, std::string_view type, AiperfStats& stats) {
  // AIPerf's SingleTurn fields (a multi_turn row's turns are SingleTurn objects too).
  fields.allow_only({"type", "text", "texts", "image", "images", "image_uuids", "audio", "audios",
                     "video", "videos", "timestamp", "delay", "role", "session_id", "output_length",
                     "extra"});
  reject_unsupported(fields, type);
  proto::Turn turn;
  const bool has_text = fields.has("text");
  if (has_text == fields.has("texts")) {
    fields.fail("text", has_text ? "\"text\" and \"texts\" cannot be set together (as in AIPerf)"
                                 : "one of \"text\" or \"texts\" is required");
  }
  if (has_text) {
    turn.user_text = *fields.string("text", true);
    turn.input_tokens_est = estimate_tokens(turn.user_text);
  } else {
    const auto texts = read_texts(fields);
    if (texts.size() == 1) {
      turn.user_text = texts[0];
      turn.input_tokens_est = estimate_tokens(turn.user_text);
    } else {
      ++stats.texts_joined;
      for (const auto& t : texts) turn.input_tokens_est += estimate_tokens(t);
      turn.messages_json = text_parts_message(texts);
    }
  }
  turn.max_tokens = fields.integer("output_length", 1).value_or(kUnsetMaxTokens);
  stats.output_lengths += turn.max_tokens != kUnsetMaxTokens ? 1 : 0;
  turn.delay_ms = fields.number("delay", 0, kMaxDelayMs, "about 11.6 days").value_or(kUnsetDelayMs);
  stats.delays += turn.delay_ms != kUnsetDelayMs ? 1 : 0;
  turn.extra_json = fields.object_json("extra").value_or("");
  stats.extras += turn.extra_json.empty() ? 0 : 1;
  return turn;
}

// A row's turns and its session_id (empty when none).
struct AiperfRow {
  std::string session;
  std::vector<proto::Turn> turns;
};

AiperfRow parse_aiperf_row(const Fields& fields, bool multi, AiperfStats& stats) {
  AiperfRow row;
  row.session = fields.id("session_id").value_or("");
  if (!multi) {
    if (fields.has("turns")) {
      fields.fail("turns", "a multi_turn row in a dataset.type aiperf_single_turn file");
    }
    row.turns.push_back(parse_aiperf_turn(fields, "single_turn", stats));
    return row;
  }
  fields.allow_only({"type", "session_id", "turns"});
  if (auto t = fields.string("type", false); t && *t != "multi_turn") {
    fields.fail("type", "\"" + *t + "\" in a dataset.type aiperf_multi_turn file");
  }
  const auto* turns = fields.get("turns");
  if (turns == nullptr) fields.fail("turns", "required: a multi_turn row's turns");
  if (!turns->IsArray()) fields.fail("turns", "expected an array of turns");
  if (turns->Empty()) fields.fail("turns", "must not be empty (as in AIPerf)");
  for (rapidjson::SizeType k = 0; k < turns->Size(); ++k) {
    const std::string at = "turns[" + std::to_string(k) + "]";
    if (!(*turns)[k].IsObject()) fields.fail(at, "expected an object");
    row.turns.push_back(
        parse_aiperf_turn(Fields((*turns)[k], fields.reader(), at + "."), "single_turn", stats));
  }
  return row;
}

class AiperfDataset final : public Dataset {
 public:
  AiperfDataset(std::string source, std::shared_ptr<const RowSource> rows,
                std::vector<uint64_t> row_offsets, std::vector<uint64_t> first_row, bool multi,
                const Config& config, const FileDatasetOptions& options, const Corpus& corpus)
      : source_(std::move(source)),
        rows_(std::move(rows)),
        row_offsets_(std::move(row_offsets)),
        first_row_(std::move(first_row)),
        multi_(multi),
        config_(config),
        options_(options),
        corpus_(corpus) {
    options_.stats = nullptr;
  }

  uint64_t size() const override { return first_row_.size() - 1; }
  int64_t start_ns(uint64_t /*index*/) const override { return 0; }

  proto::Conversation conversation(uint64_t index) const override {
    proto::Conversation conversation;
    AiperfStats ignored;
    for (uint64_t r = first_row_.at(index); r < first_row_.at(index + 1); ++r) {
      const JsonlReader reader(source_, row_offsets_[r]);
      rapidjson::Document document;
      reader.parse_back(rows_->line_at(row_offsets_[r]), document);
      AiperfRow row = parse_aiperf_row(Fields(document, reader), multi_, ignored);
      if (r == first_row_[index]) conversation.conversation_id = std::move(row.session);
      for (auto& turn : row.turns) conversation.turns.push_back(std::move(turn));
    }
    if (config_.dataset.max_turns &&
        conversation.turns.size() > static_cast<size_t>(*config_.dataset.max_turns)) {
      conversation.turns.resize(static_cast<size_t>(*config_.dataset.max_turns));
    }
    conversation.index = index;
    if (!options_.raw) finish_file_conversation(conversation, index, config_, corpus_);
    return conversation;
  }

 private:
  std::string source_;
  std::shared_ptr<const RowSource> rows_;
  std::vector<uint64_t> row_offsets_;  // every kept row, grouped by conversation, file order
  std::vector<uint64_t> first_row_;    // conversation i: row_offsets_[first_row_[i], [i + 1])
  bool multi_;
  Config config_;
  FileDatasetOptions options_;
  const Corpus& corpus_;
};

// A kept row: its offset and its conversation's slot.
struct AiperfRowRef {
  uint64_t offset;
  uint64_t slot;
};

// The kept rows' offsets grouped by conversation, file order within each (a counting sort).
std::vector<uint64_t> group_aiperf_rows(const std::vector<AiperfRowRef>& kept_rows, uint64_t kept,
                                        std::vector<uint64_t>& first_row) {
  first_row.assign(kept + 1, 0);
  for (const auto& r : kept_rows) ++first_row[r.slot + 1];
  for (uint64_t i = 0; i < kept; ++i) first_row[i + 1] += first_row[i];
  std::vector<uint64_t> offsets(kept_rows.size());
  std::vector<uint64_t> next(first_row.begin(), first_row.end() - 1);
  for (const auto& r : kept_rows) offsets[next[r.slot]++] = r.offset;
  return offsets;
}

}  // namespace

std::unique_ptr<Dataset> index_aiperf_dataset(std::istream& in, const std::string& source,
                                              std::shared_ptr<const RowSource> rows, bool multi,
                                              const Config& config,
                                              const FileDatasetOptions& options, AiperfStats* stats,
                                              const Corpus& corpus) {
  check_file_draws(config);
  const uint64_t limit = file_conversation_limit(config);
  const uint64_t max_turns = config.dataset.max_turns
                                 ? static_cast<uint64_t>(*config.dataset.max_turns)
                                 : std::numeric_limits<uint64_t>::max();
  AiperfStats counted;
  std::vector<AiperfRowRef> kept_rows;
  std::vector<uint64_t> wire_bytes;  // per conversation: its Assign entry so far
  std::vector<uint64_t> turns;       // per conversation
  std::unordered_map<IdHash, uint64_t, IdHashHasher> by_session;
  // The ids are set later: a correlation id is 36 bytes, a default id "conv-<index>" < 32.
  const uint64_t fresh_bytes = wire_bytes_bound(proto::Conversation{}, 36 + 32);
  JsonlReader reader(in, source);
  rapidjson::Document document;
  while (reader.next(document)) {
    ++counted.rows;
    const Fields fields(document, reader);
    const AiperfRow row = parse_aiperf_row(fields, multi, counted);
    uint64_t slot = wire_bytes.size();
    if (!multi && !row.session.empty()) {
      slot = by_session.emplace(hash_id(row.session), slot).first->second;
    }
    if (slot == wire_bytes.size()) {
      wire_bytes.push_back(fresh_bytes + row.session.size());
      turns.push_back(0);
      counted.sessions += row.session.empty() ? 0 : 1;
    }
    for (size_t k = 0; k < row.turns.size(); ++k) {
      const auto& turn = row.turns[k];
      if (turns[slot] == 0 && turn.delay_ms != kUnsetDelayMs) ++counted.first_delays;
      if (++turns[slot] > max_turns) {
        ++counted.cut_turns;
        continue;
      }
      ++counted.turns;
      // With history: recorded every turn but the last gets a generated reply: count it for
      // every turn (the last is not known yet in a single_turn file).
      const uint64_t reply = generated_reply_bytes(turn, 0, 2, config);
      wire_bytes[slot] += turn_wire_bytes_bound(turn) + reply;
    }
    if (wire_bytes[slot] > kMaxConversationWireBytes) {
      fields.fail(multi ? "turns" : (row.session.empty() ? "text" : "session_id"),
                  "the conversation reaches " + describe_bytes(wire_bytes[slot]) +
                      " on the wire with this row, more than one conversation may be (" +
                      describe_bytes(kMaxConversationWireBytes) + ")");
    }
    if (slot < limit) kept_rows.push_back({reader.offset(), slot});
  }
  if (wire_bytes.empty()) throw ConfigError(source + ": the dataset has no rows");
  counted.conversations = wire_bytes.size();
  if (stats != nullptr) *stats = counted;
  const uint64_t kept = std::min<uint64_t>(wire_bytes.size(), limit);
  wire_bytes = {};
  by_session = {};
  std::vector<uint64_t> first_row;
  std::vector<uint64_t> offsets = group_aiperf_rows(kept_rows, kept, first_row);
  return std::make_unique<AiperfDataset>(source, std::move(rows), std::move(offsets),
                                         std::move(first_row), multi, config, options, corpus);
}

std::unique_ptr<Dataset> open_aiperf_dataset(const std::string& path, bool multi,
                                             const Config& config,
                                             const FileDatasetOptions& options, AiperfStats* stats,
                                             const Corpus& corpus) {
  auto rows = open_row_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path");
  return index_aiperf_dataset(in, path, std::move(rows), multi, config, options, stats, corpus);
}

std::vector<proto::Conversation> parse_aiperf_dataset(std::istream& in, const std::string& source,
                                                      bool multi, const Config& config,
                                                      AiperfStats* stats) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream again(text);
  return materialize(
      *index_aiperf_dataset(again, source, row_text(std::move(text)), multi, config, {}, stats));
}

std::vector<std::string> describe_aiperf_stats(const AiperfStats& s) {
  std::vector<std::string> lines;
  auto add = [&](uint64_t n, const std::string& what, const char* unit) {
    if (n > 0) lines.push_back(what + ": " + std::to_string(n) + " " + unit);
  };
  add(s.turns, "text/texts -> the turn's user text", "turns");
  add(s.texts_joined, "texts (several) -> one user message of text parts", "turns");
  add(s.sessions, "session_id -> conversation_id", "conversations");
  add(s.output_lengths, "output_length -> max_tokens", "turns");
  add(s.turns - std::min(s.turns, s.output_lengths),
      "no output_length -> max_tokens drawn from dataset.output_tokens", "turns");
  add(s.delays, "delay -> the think time before the turn (delay_ms)", "turns");
  add(s.first_delays, "delay on a conversation's first turn -> not honoured (load.* starts it)",
      "turns");
  add(s.extras, "extra -> merged into the request body", "turns");
  add(s.cut_turns, "dataset.max_turns -> cut", "turns");
  return lines;
}

}  // namespace convoy::controller
