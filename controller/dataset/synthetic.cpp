#include "controller/dataset/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "controller/dataset/ids.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/random_tokens.hpp"
#include "controller/dataset/rng.hpp"

namespace convoy::controller {

namespace {

// Exactly `tokens` tokens of text by the plan's tokenizer: the corpus's words (from `position`;
// the first bare unless `continues`), or with dataset.text random_tokens words drawn from the
// vocabulary (seeded by `position`).
void append_exact(const TokenPlan& plan, std::string& out, uint64_t position, int64_t tokens,
                  bool continues) {
  if (plan.random) {
    plan.random->append(out, position, tokens, continues);
  } else {
    plan.text->append(out, position, tokens, continues);
  }
}

// The user text of turn k: `input_tokens` tokens by the 4-bytes estimate, or exactly by the
// tokenizer (less the template overhead with count_chat_template); turn 0 opens with `tag`.
void make_user_text(proto::Turn& turn, size_t k, int64_t input_tokens, const std::string& tag,
                    Rng& text, const Corpus& corpus, const TokenPlan* plan) {
  if (plan == nullptr) {
    if (k == 0) turn.user_text = tag + " ";
    const size_t bytes = bytes_for_tokens(input_tokens);
    if (turn.user_text.size() < bytes) {
      corpus.append_excerpt(turn.user_text, text.next_u64(), bytes - turn.user_text.size());
    }
    turn.input_tokens_est = estimate_tokens(turn.user_text);
    return;
  }
  const int64_t overhead = k == 0 ? plan->first_turn_overhead : plan->later_turn_overhead;
  const int64_t tag_tokens = k == 0 ? plan->text->tag_tokens(tag) : 0;
  // Draws are clamped to the reachable floor (exact_floor): never below it here.
  const int64_t words = std::max<int64_t>(input_tokens - overhead - tag_tokens, 0);
  if (k == 0) turn.user_text = tag;
  append_exact(*plan, turn.user_text, text.next_u64(), words, k == 0);
  turn.input_tokens_est = words + tag_tokens;
}

// `count` turns drawn from dataset.* with the generators given; turn 0 opens with `tag` (a
// space follows it under the estimate; the words after it carry their own with a tokenizer).
std::vector<proto::Turn> draw_turns(const DatasetConfig& dataset, size_t count,
                                    const std::string& tag, Rng& shape, Rng& text, Rng& reply,
                                    const Corpus& corpus, const TokenPlan* plan) {
  const bool recorded = dataset.history == HistoryMode::kRecorded;
  std::vector<proto::Turn> turns(count);
  for (size_t k = 0; k < count; ++k) {
    proto::Turn& turn = turns[k];
    const int64_t input_tokens = draw_integer(dataset.input_tokens, shape, 1);
    turn.max_tokens = draw_integer(dataset.output_tokens, shape, 1);
    turn.delay_ms = k == 0 ? 0 : draw_real(dataset.think_time_ms, shape, 0);
    make_user_text(turn, k, input_tokens, tag, text, corpus, plan);
    if (recorded && k + 1 < count) {
      const uint64_t position = reply.next_u64();
      if (plan == nullptr) {
        turn.recorded_reply = corpus.excerpt(position, bytes_for_tokens(turn.max_tokens));
      } else {
        append_exact(*plan, turn.recorded_reply, position, turn.max_tokens, false);
      }
    }
  }
  return turns;
}

// dataset.subagents: whether lead `index` spawns, how many and after which turn, from a stream
// of its own (so turning sub-agents on never changes a lead's own draws); each sub-agent's turns
// from generators of its own (seed, lead index, position).
void add_subagents(proto::Conversation& conversation, const Config& config, uint64_t index,
                   const Corpus& corpus, const TokenPlan* plan) {
  const SubagentsConfig& spec = *config.dataset.subagents;
  Rng family(config.seed, index, Stream::kSubagents);
  if (!(family.uniform01() < spec.probability)) return;
  const auto count = static_cast<size_t>(draw_integer(spec.count, family, 1));
  const auto lead_turns = static_cast<int64_t>(conversation.turns.size());
  const uint64_t child_seed = derive_seed(config.seed, index, Stream::kSubagentText);
  for (size_t p = 0; p < count; ++p) {
    proto::SubAgent child;
    child.conversation_id = default_subagent_id(conversation.conversation_id, p);
    child.correlation_id = subagent_correlation_id(config.seed, index, p);
    child.parent = -1;
    child.spawn_after_turn =
        static_cast<uint32_t>(std::min(draw_integer(spec.spawn_after_turn, family, 1), lead_turns));
    child.system_prompt = conversation.system_prompt;
    const auto turns = static_cast<size_t>(draw_integer(spec.turns, family, 1));
    Rng shape(child_seed, p, Stream::kShape);
    Rng text(child_seed, p, Stream::kText);
    Rng reply(child_seed, p, Stream::kReply);
    child.turns = draw_turns(config.dataset, turns,
                             "[c" + std::to_string(index) + "s" + std::to_string(p) + "]", shape,
                             text, reply, corpus, plan);
    conversation.subagents.push_back(std::move(child));
  }
}

// dataset.prefixes: conversation `index`'s prefixes: K pool indices drawn without repeats from
// (seed, index), prefix j the same text (from (seed, j)) wherever it is used, so conversations
// holding the same first prefix share it as a cacheable prefix. By the estimate each prefix is
// followed by a newline; with a tokenizer the prefixes follow one another (and `after_text`, the
// shared system prompt) after a space, so the K prefixes add exactly K * tokens (a newline after
// a word ending in punctuation can merge with it, so it would add zero tokens or one).
std::string pool_prefixes(const Config& config, uint64_t index, const Corpus& corpus,
                          const TokenPlan* plan, bool after_text) {
  const PrefixesConfig& spec = *config.dataset.prefixes;
  Rng pick(config.seed, index, Stream::kPrefixPick);
  std::vector<uint64_t> chosen;
  const auto pool = static_cast<uint64_t>(std::max<int64_t>(spec.pool, 1));
  const auto wanted = static_cast<size_t>(std::clamp<int64_t>(spec.per_conversation, 1, spec.pool));
  while (chosen.size() < wanted) {  // wanted <= pool (and <= 64): rejection ends quickly
    const uint64_t j = pick.below(pool);
    if (std::find(chosen.begin(), chosen.end(), j) == chosen.end()) chosen.push_back(j);
  }
  std::string out;
  for (const uint64_t j : chosen) {
    Rng where(config.seed, j, Stream::kPrefixPool);
    if (plan == nullptr) {
      corpus.append_excerpt(out, where.next_u64(), bytes_for_tokens(spec.tokens));
      out += '\n';
    } else {
      append_exact(*plan, out, where.next_u64(), spec.tokens, after_text || !out.empty());
    }
  }
  return out;
}

proto::Conversation build_conversation(const Config& config, uint64_t index, const Corpus& corpus,
                                       const std::string& system_prompt, const TokenPlan* plan) {
  const DatasetConfig& dataset = config.dataset;
  proto::Conversation conversation;
  conversation.index = index;
  conversation.conversation_id = default_conversation_id(index);
  conversation.correlation_id = correlation_id(config.seed, index);
  conversation.system_prompt = system_prompt;
  if (dataset.prefixes) {
    if (!system_prompt.empty() && plan == nullptr) conversation.system_prompt += '\n';
    conversation.system_prompt +=
        pool_prefixes(config, index, corpus, plan, !system_prompt.empty());
  }

  Rng shape(config.seed, index, Stream::kShape);
  Rng text(config.seed, index, Stream::kText);
  Rng reply(config.seed, index, Stream::kReply);
  const auto turns = static_cast<size_t>(draw_integer(dataset.turns, shape, 1));
  conversation.turns = draw_turns(dataset, turns, "[c" + std::to_string(index) + "]", shape, text,
                                  reply, corpus, plan);
  if (dataset.subagents) add_subagents(conversation, config, index, corpus, plan);
  return conversation;
}

std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Rejects draws that could make a conversation the wire refuses (the run would wait for it
// forever otherwise). Judged before anything is generated, so a huge mean fails fast.
void check_wire_bounds(const Config& config, double bytes_per_token) {
  const DatasetConfig& dataset = config.dataset;
  const std::string where = config.source_path.empty() ? "" : config.source_path + ": ";
  const auto limit = static_cast<double>(proto::kMaxStringBytes);
  auto string_bound = [&](const char* key, double tokens, const char* what) {
    if (tokens * bytes_per_token <= limit) return;
    throw ConfigError(where + "dataset." + key + ": " + what + " of up to " + number_text(tokens) +
                      " tokens (" + number_text(tokens * bytes_per_token) +
                      " bytes) is longer than one string may be on the wire (" +
                      describe_bytes(proto::kMaxStringBytes) + ")");
  };
  const bool recorded = dataset.history == HistoryMode::kRecorded;
  const double input = std::max(draw_upper_bound(dataset.input_tokens), 1.0);
  const double output = std::max(draw_upper_bound(dataset.output_tokens), 1.0);
  const double turns = std::max(std::round(draw_upper_bound(dataset.turns)), 1.0);
  double prefix = static_cast<double>(std::max<int64_t>(dataset.shared_prefix_tokens, 0));
  string_bound("input_tokens", input, "a turn's text");
  if (recorded) string_bound("output_tokens", output, "with history: recorded, a reply");
  string_bound("shared_prefix_tokens", prefix, "the system prompt");
  if (const auto& p = dataset.prefixes) {  // a newline between and after each: a token at most
    prefix += static_cast<double>(p->per_conversation) * static_cast<double>(p->tokens + 1) + 1;
    string_bound("prefixes", prefix, "the system prompt with its pool prefixes");
  }

  const double per_turn = (input + (recorded ? output : 0)) * bytes_per_token +
                          static_cast<double>(turn_wire_bytes_bound(proto::Turn{}));
  const double lead = turns * per_turn + prefix * bytes_per_token +
                      static_cast<double>(wire_bytes_bound(proto::Conversation{}, 128));
  // A family crosses in one piece: the lead and every sub-agent (each with the system prompt).
  double children = 0;
  if (dataset.subagents && dataset.subagents->probability > 0) {
    const double count = std::max(std::round(draw_upper_bound(dataset.subagents->count)), 1.0);
    const double child_turns =
        std::max(std::round(draw_upper_bound(dataset.subagents->turns)), 1.0);
    children = count * (child_turns * per_turn + prefix * bytes_per_token +
                        static_cast<double>(subagent_wire_bytes_bound(proto::SubAgent{}) + 128));
  }
  const double total = lead + children;
  if (total <= static_cast<double>(kMaxConversationWireBytes)) return;
  if (children > 0) {
    throw ConfigError(where + "dataset.subagents: a lead of up to " + number_text(lead) +
                      " bytes with sub-agents of up to " + number_text(children) +
                      " bytes makes a family of up to " + number_text(total) +
                      " bytes, more than one conversation (a family crosses in one piece) may be "
                      "on the wire (" +
                      describe_bytes(kMaxConversationWireBytes) + ")");
  }
  throw ConfigError(where + "dataset.turns: up to " + number_text(turns) + " turns of up to " +
                    number_text(per_turn) + " bytes each make a conversation of up to " +
                    number_text(total) + " bytes, more than one conversation may be on the wire (" +
                    describe_bytes(kMaxConversationWireBytes) + ")");
}

// With a tokenizer, the fewest tokens turn k can hold: the tag of the longest index (turn 0) and
// the template overhead. Throws ConfigError when dataset.input_tokens can draw fewer (judged at
// the larger of min and mean - 6 stddev), saying by how much; returns the floor draws are
// clamped to (a draw beyond 6 stddev is raised to it).
int64_t exact_floor(const Config& config, const TokenPlan& plan) {
  const DatasetConfig& dataset = config.dataset;
  const uint64_t last = static_cast<uint64_t>(std::max<int64_t>(dataset.conversations, 1)) - 1;
  std::string tag = "[c" + std::to_string(last) + "]";
  if (dataset.subagents && dataset.subagents->probability > 0) {
    tag = "[c" + std::to_string(last) + "s" +
          std::to_string(static_cast<int64_t>(draw_upper_bound(dataset.subagents->count))) + "]";
  }
  const int64_t first = plan.text->tag_tokens(tag) + plan.first_turn_overhead;
  const int64_t floor = std::max(first, plan.later_turn_overhead);
  const Distribution& d = dataset.input_tokens;
  double lowest = std::max(d.min.value_or(1), d.mean - 6 * std::max(d.stddev, 0.0));
  if (!d.mix.empty()) {  // a mixture: its lowest component's
    lowest = std::numeric_limits<double>::infinity();
    for (const auto& c : d.mix) {
      if (c.weight <= 0) continue;
      lowest = std::min(lowest, std::max(c.min.value_or(1), c.mean - 6 * std::max(c.stddev, 0.0)));
    }
  }
  if (lowest >= static_cast<double>(floor)) return floor;
  const std::string where = config.source_path.empty() ? "" : config.source_path + ": ";
  throw ConfigError(
      where + "dataset.input_tokens: draws as low as " + number_text(lowest) +
      " tokens cannot be met exactly by " + plan.text->source() + ": a first turn holds at least " +
      std::to_string(first) + " (the cache-bust tag " + tag + " and " +
      std::to_string(plan.first_turn_overhead) + " of chat template), a later turn " +
      std::to_string(plan.later_turn_overhead) + "; short by " +
      number_text(static_cast<double>(floor) - lowest) + " (raise input_tokens.min or the mean)");
}

class SyntheticDataset final : public Dataset {
 public:
  SyntheticDataset(const Config& config, const Corpus& corpus,
                   std::shared_ptr<const TokenPlan> plan)
      : config_(config),
        corpus_(corpus),
        size_(static_cast<uint64_t>(std::max<int64_t>(config.dataset.conversations, 0))),
        plan_(std::move(plan)),
        system_prompt_(synthetic_system_prompt(config, corpus, plan_.get())) {
    if (plan_) {
      Distribution& d = config_.dataset.input_tokens;
      d.min = std::max(d.min.value_or(1), static_cast<double>(exact_floor(config, *plan_)));
    }
  }

  uint64_t size() const override { return size_; }
  proto::Conversation conversation(uint64_t index) const override {
    return build_conversation(config_, index, corpus_, system_prompt_, plan_.get());
  }
  int64_t start_ns(uint64_t /*index*/) const override { return 0; }

 private:
  Config config_;
  const Corpus& corpus_;
  uint64_t size_;
  std::shared_ptr<const TokenPlan> plan_;  // null: the 4-bytes estimate
  std::string system_prompt_;              // shared by every conversation: built once
};

}  // namespace

std::string synthetic_system_prompt(const Config& config, const Corpus& corpus,
                                    const TokenPlan* plan) {
  const int64_t tokens = config.dataset.shared_prefix_tokens;
  if (tokens <= 0) return "";
  Rng rng(config.seed, 0, Stream::kSystemPrompt);
  if (plan == nullptr) return corpus.excerpt(rng.next_u64(), bytes_for_tokens(tokens));
  std::string text;
  append_exact(*plan, text, rng.next_u64(), tokens, false);
  return text;
}

proto::Conversation make_synthetic_conversation(const Config& config, uint64_t index,
                                                const Corpus& corpus) {
  return build_conversation(config, index, corpus, synthetic_system_prompt(config, corpus),
                            nullptr);
}

std::unique_ptr<Dataset> open_synthetic_dataset(const Config& config, const Corpus& corpus,
                                                std::shared_ptr<const TokenPlan> plan) {
  // With a tokenizer, a token is the corpus's average bytes a token, with a margin for the
  // words skipped at a text's end.
  double bytes_per_token =
      plan ? 1.1 * static_cast<double>(corpus.size_bytes()) /
                 static_cast<double>(std::max<int64_t>(plan->text->corpus_tokens(), 1))
           : static_cast<double>(kBytesPerToken);
  // Random words: judged at the longest, so no draw can pass the bound.
  if (plan && plan->random) bytes_per_token = static_cast<double>(plan->random->max_word_bytes());
  check_wire_bounds(config, std::max(bytes_per_token, 1.0));
  return std::make_unique<SyntheticDataset>(config, corpus, std::move(plan));
}

std::vector<proto::Conversation> make_synthetic_dataset(const Config& config,
                                                        const Corpus& corpus) {
  return materialize(*open_synthetic_dataset(config, corpus));
}

}  // namespace convoy::controller
