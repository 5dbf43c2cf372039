#include "controller/dataset/token_plan.hpp"

#include <rapidjson/document.h>

#include <vector>

#include "controller/dataset/random_tokens.hpp"
#include "tokenizer/tokenizer.hpp"

namespace convoy::controller {

namespace {

std::string config_prefix(const Config& config) {
  return config.source_path.empty() ? "" : config.source_path + ": ";
}

// Tokens of the text contents of a messages array (string contents and {"type":"text"} parts).
int64_t count_messages(const TokenCounter& counter, const std::string& messages_json) {
  rapidjson::Document doc;
  doc.Parse(messages_json.data(), messages_json.size());
  if (doc.HasParseError() || !doc.IsArray()) return 0;
  int64_t tokens = 0;
  for (const auto& message : doc.GetArray()) {
    if (!message.IsObject()) continue;
    const auto content = message.FindMember("content");
    if (content == message.MemberEnd()) continue;
    if (content->value.IsString()) {
      tokens += counter.count(
          std::string_view(content->value.GetString(), content->value.GetStringLength()));
      continue;
    }
    if (!content->value.IsArray()) continue;
    for (const auto& part : content->value.GetArray()) {
      if (!part.IsObject()) continue;
      const auto text = part.FindMember("text");
      if (text == part.MemberEnd() || !text->value.IsString()) continue;
      tokens +=
          counter.count(std::string_view(text->value.GetString(), text->value.GetStringLength()));
    }
  }
  return tokens;
}

void count_turns(std::vector<proto::Turn>& turns, const TokenCounter& counter) {
  for (proto::Turn& turn : turns) {
    turn.input_tokens_est = turn.messages_json.empty()
                                ? counter.count(turn.user_text)
                                : count_messages(counter, turn.messages_json);
  }
}

class CountedDataset final : public Dataset {
 public:
  CountedDataset(std::unique_ptr<Dataset> inner, std::shared_ptr<const TokenCounter> counter)
      : inner_(std::move(inner)), counter_(std::move(counter)) {}

  uint64_t size() const override { return inner_->size(); }
  proto::Conversation conversation(uint64_t index) const override {
    proto::Conversation c = inner_->conversation(index);
    count_turns(c.turns, *counter_);
    for (proto::SubAgent& child : c.subagents) count_turns(child.turns, *counter_);
    return c;
  }
  int64_t start_ns(uint64_t index) const override { return inner_->start_ns(index); }

 private:
  std::unique_ptr<Dataset> inner_;
  std::shared_ptr<const TokenCounter> counter_;
};

}  // namespace

LocalTokenCounter::LocalTokenCounter(const Config& config) : path_(*config.dataset.tokenizer) {
  try {
    tokenizer_ = tokenizer::Tokenizer::load(path_);
  } catch (const tokenizer::LoadError& e) {
    throw ConfigError(config_prefix(config) + "dataset.tokenizer: " + e.what());
  }
}

LocalTokenCounter::~LocalTokenCounter() = default;

int64_t LocalTokenCounter::count(std::string_view text) const {
  return static_cast<int64_t>(tokenizer_->count(text));
}

std::shared_ptr<const TokenPlan> local_token_plan(const Config& config, const Corpus& corpus) {
  if (!config.dataset.tokenizer || config.dataset.tokenizer_is_server()) return nullptr;
  auto plan = std::make_shared<TokenPlan>();
  auto counter = std::make_shared<LocalTokenCounter>(config);
  plan->counter = counter;
  try {
    plan->text = std::make_shared<ExactText>(corpus, *counter);
    if (config.dataset.text == DatasetText::kRandomTokens) {
      // A token's text after other text: decoders drop the space of a text's first token.
      const tokenizer::Tokenizer& t = counter->tokenizer();
      const std::vector<uint32_t> anchor = t.encode("x");
      const std::string anchor_text = t.decode(anchor);
      std::vector<uint32_t> ids = anchor;
      auto after_anchor = [&](uint32_t id) {
        ids.resize(anchor.size());
        ids.push_back(id);
        const std::string text = t.decode(ids);
        return text.starts_with(anchor_text) ? text.substr(anchor_text.size()) : std::string();
      };
      plan->random = std::make_shared<RandomTokens>(*counter, static_cast<uint32_t>(t.vocab_size()),
                                                    after_anchor);
    }
  } catch (const ConfigError& e) {
    throw ConfigError(config_prefix(config) + e.what());
  }
  return plan;
}

std::unique_ptr<Dataset> count_with_tokenizer(std::unique_ptr<Dataset> dataset,
                                              std::shared_ptr<const TokenCounter> counter) {
  return std::make_unique<CountedDataset>(std::move(dataset), std::move(counter));
}

}  // namespace convoy::controller
