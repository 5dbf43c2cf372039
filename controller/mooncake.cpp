#include "controller/mooncake.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "controller/dataset_rows.hpp"
#include "controller/rng.hpp"

namespace convoy::controller {

namespace {

// A row's prompt before its text is built (text is built only for the rows kept).
struct PromptSpec {
  int64_t input_length = 0;  // 0 when the row gave text_input or messages
  std::vector<uint64_t> hash_ids;
};

struct PendingConversation {
  proto::Conversation conversation;
  std::vector<PromptSpec> prompts;     // one per turn
  std::optional<double> timestamp_ms;  // of its first row
};

// Blocks for the hash ids (the last one cut to what input_length leaves), then seeded prose for
// tokens beyond the blocks. Without hash ids the text starts with a tag naming the conversation
// and turn, so unrelated rows never share a prefix by accident.
std::string build_prompt(const PromptSpec& spec, uint64_t seed, uint64_t index, uint64_t turn,
                         const Corpus& corpus, int64_t block_tokens) {
  const size_t total_bytes = bytes_for_tokens(spec.input_length);
  std::string text;
  text.reserve(total_bytes);
  for (const uint64_t id : spec.hash_ids) {
    const size_t room = total_bytes - text.size();
    const std::string block = mooncake_block_text(seed, id, corpus, block_tokens);
    text.append(block, 0, std::min(room, block.size()));
  }
  if (spec.hash_ids.empty()) {
    text = "[c" + std::to_string(index) + "t" + std::to_string(turn) + "] ";
  }
  if (text.size() < total_bytes) {
    Rng rng(seed, index, turn, Stream::kText);
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

std::vector<proto::Conversation> parse_mooncake_trace(std::istream& in, const std::string& source,
                                                      const Config& config, const Corpus& corpus,
                                                      int64_t block_tokens) {
  std::vector<PendingConversation> pending;
  std::unordered_map<std::string, size_t> by_session;
  const bool trace_mode = config.load.mode == LoadMode::kTrace;
  const auto block = static_cast<double>(block_tokens);
  JsonlReader reader(in, source);
  rapidjson::Document row;
  while (reader.next(row)) {
    const Fields fields(row, reader);
    fields.allow_only({"timestamp", "input_length", "text_input", "messages", "output_length",
                       "hash_ids", "session_id", "delay", "extra"});
    proto::Turn turn;
    PromptSpec spec;
    const int inputs = static_cast<int>(fields.has("input_length")) +
                       static_cast<int>(fields.has("text_input")) +
                       static_cast<int>(fields.has("messages"));
    if (inputs != 1) {
      fields.fail("input_length",
                  "exactly one of \"input_length\", \"text_input\" or "
                  "\"messages\" is required");
    }
    if (auto length = fields.integer("input_length", 1)) {
      spec.input_length = *length;
      turn.input_tokens_est = *length;
      spec.hash_ids = fields.id_list("hash_ids").value_or(std::vector<uint64_t>{});
      const auto blocks = static_cast<double>(spec.hash_ids.size());
      if (!spec.hash_ids.empty() && static_cast<double>(*length) <= (blocks - 1) * block) {
        fields.fail("input_length", std::to_string(*length) + " leaves the last of " +
                                        std::to_string(spec.hash_ids.size()) +
                                        " hash_ids empty (blocks of " +
                                        std::to_string(block_tokens) + " tokens)");
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
    turn.delay_ms = fields.number("delay", 0).value_or(kUnsetDelayMs);
    turn.extra_json = fields.object_json("extra").value_or("");
    const auto timestamp_ms = fields.number("timestamp", 0);

    const auto session = fields.id("session_id");
    size_t slot = pending.size();
    if (session) {
      const auto [it, inserted] = by_session.emplace(*session, pending.size());
      slot = it->second;
    }
    if (slot == pending.size()) {
      if (trace_mode && !timestamp_ms) {
        fields.fail("timestamp", "required on a conversation's first row with load.mode trace");
      }
      PendingConversation fresh;
      fresh.conversation.conversation_id = session.value_or("");
      fresh.timestamp_ms = timestamp_ms;
      pending.push_back(std::move(fresh));
    }
    // A later row's timestamp is not used: turns after the first are paced by "delay" (think
    // time after the previous response), as the worker runs them.
    pending[slot].conversation.turns.push_back(std::move(turn));
    pending[slot].prompts.push_back(std::move(spec));
  }
  if (pending.empty()) throw ConfigError(source + ": the trace has no rows");

  // A file dataset runs whole unless dataset.conversations was given.
  const auto limit = config.dataset.conversations_set
                         ? static_cast<size_t>(std::max<int64_t>(config.dataset.conversations, 0))
                         : std::numeric_limits<size_t>::max();
  if (pending.size() > limit) pending.resize(limit);
  double first_ms = 0;
  if (trace_mode && !pending.empty()) {
    first_ms = *pending.front().timestamp_ms;
    for (const auto& p : pending) first_ms = std::min(first_ms, *p.timestamp_ms);
  }
  std::vector<proto::Conversation> conversations;
  conversations.reserve(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    auto& p = pending[i];
    for (size_t k = 0; k < p.prompts.size(); ++k) {
      if (p.prompts[k].input_length > 0) {
        p.conversation.turns[k].user_text =
            build_prompt(p.prompts[k], config.seed, i, k, corpus, block_tokens);
      }
    }
    if (trace_mode) {
      p.conversation.start_ns = std::llround((*p.timestamp_ms - first_ms) * 1e6);
    }
    conversations.push_back(std::move(p.conversation));
  }
  finish_file_dataset(conversations, config, corpus);
  return conversations;
}

}  // namespace convoy::controller
