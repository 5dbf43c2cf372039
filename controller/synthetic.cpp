#include "controller/synthetic.hpp"

#include <algorithm>

#include "controller/ids.hpp"
#include "controller/rng.hpp"

namespace convoy::controller {

std::string synthetic_system_prompt(const Config& config, const Corpus& corpus) {
  const int64_t tokens = config.dataset.shared_prefix_tokens;
  if (tokens <= 0) return "";
  Rng rng(config.seed, 0, Stream::kSystemPrompt);
  return corpus.excerpt(rng.next_u64(), bytes_for_tokens(tokens));
}

proto::Conversation make_synthetic_conversation(const Config& config, uint64_t index,
                                                const Corpus& corpus) {
  const DatasetConfig& dataset = config.dataset;
  proto::Conversation conversation;
  conversation.index = index;
  conversation.conversation_id = default_conversation_id(index);
  conversation.correlation_id = correlation_id(config.seed, index);
  conversation.system_prompt = synthetic_system_prompt(config, corpus);

  Rng shape(config.seed, index, Stream::kShape);
  Rng text(config.seed, index, Stream::kText);
  Rng reply(config.seed, index, Stream::kReply);
  const bool recorded = dataset.history == HistoryMode::kRecorded;
  const auto turns = static_cast<size_t>(draw_integer(dataset.turns, shape, 1));
  conversation.turns.resize(turns);
  for (size_t k = 0; k < turns; ++k) {
    proto::Turn& turn = conversation.turns[k];
    const int64_t input_tokens = draw_integer(dataset.input_tokens, shape, 1);
    turn.max_tokens = draw_integer(dataset.output_tokens, shape, 1);
    turn.delay_ms = k == 0 ? 0 : draw_real(dataset.think_time_ms, shape, 0);

    const size_t bytes = bytes_for_tokens(input_tokens);
    if (k == 0) turn.user_text = "[c" + std::to_string(index) + "] ";
    if (turn.user_text.size() < bytes) {
      corpus.append_excerpt(turn.user_text, text.next_u64(), bytes - turn.user_text.size());
    }
    turn.input_tokens_est = estimate_tokens(turn.user_text);
    if (recorded && k + 1 < turns) {
      turn.recorded_reply = corpus.excerpt(reply.next_u64(), bytes_for_tokens(turn.max_tokens));
    }
  }
  return conversation;
}

std::vector<proto::Conversation> make_synthetic_dataset(const Config& config,
                                                        const Corpus& corpus) {
  std::vector<proto::Conversation> conversations;
  const auto count = static_cast<uint64_t>(std::max<int64_t>(config.dataset.conversations, 0));
  conversations.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    conversations.push_back(make_synthetic_conversation(config, i, corpus));
  }
  return conversations;
}

}  // namespace convoy::controller
