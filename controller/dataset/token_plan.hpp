// dataset.tokenizer as the dataset layer uses it: the local tokenizer.json behind TokenCounter,
// the plan a synthetic dataset cuts exact text by, and file rows counted by the tokenizer
// (docs/datasets.md "Exact tokens").
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/exact_text.hpp"

namespace convoy::tokenizer {
class Tokenizer;
}

namespace convoy::controller {

// A tokenizer.json read by convoy's own encoder (tokenizer/).
class LocalTokenCounter final : public TokenCounter {
 public:
  // Throws ConfigError "FILE: dataset.tokenizer: ..." naming the path and the reason (not a
  // tokenizer, an unsupported model type) when it cannot be loaded.
  explicit LocalTokenCounter(const Config& config);
  ~LocalTokenCounter() override;
  int64_t count(std::string_view text) const override;
  std::string source() const override { return "tokenizer " + path_; }
  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  std::string path_;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
};

// The plan for a local dataset.tokenizer (count_chat_template overheads 0: those come from the
// server, see template_overhead.hpp). Null when dataset.tokenizer is unset or "server".
std::shared_ptr<const TokenPlan> local_token_plan(const Config& config,
                                                  const Corpus& corpus = Corpus::embedded());

// Every turn's input_tokens_est of `dataset`'s conversations counted by `counter` (user text,
// or the contents of a "messages" array), as conversations are read back: JSONL and Mooncake
// rows get their ISL by the tokenizer instead of the estimate.
std::unique_ptr<Dataset> count_with_tokenizer(std::unique_ptr<Dataset> dataset,
                                              std::shared_ptr<const TokenCounter> counter);

}  // namespace convoy::controller
