// What convoy learns from the target before a run, for dataset.tokenizer: server and
// dataset.count_chat_template (docs/datasets.md "Exact tokens"): token counts from its
// POST /tokenize (vLLM's shapes; convoy-mock serves the same), and the chat template's overhead
// from /tokenize's chat form or, where the server has no /tokenize (Dynamo 1.6.1's frontend),
// from usage.prompt_tokens of one-token chat requests. Blocking: it runs before any traffic.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "controller/config/config.hpp"
#include "controller/dataset/exact_text.hpp"

namespace convoy::controller {

// The server cannot give what is needed (no /tokenize, a reply without a count, an error status):
// what() names the URL, the status and the reason. A bad-input failure (exit 2, nothing of the
// run sent), unlike std::runtime_error for a server that cannot be reached (exit 3).
struct ServerTokensError : ConfigError {
  using ConfigError::ConfigError;
};

// POST {base}/tokenize {"model", "prompt", "add_special_tokens": false} -> "count".
class ServerTokenCounter final : public TokenCounter {
 public:
  // base_url: target.url as resolved (a trailing /v1 is dropped: vLLM mounts /tokenize at root).
  ServerTokenCounter(const Config& config, std::string base_url);
  int64_t count(std::string_view text) const override;
  std::string source() const override { return "POST " + url_; }
  // The chat form: {"model", "messages", "add_generation_prompt": true} -> "count".
  int64_t count_chat(const std::string& messages_json) const;

 private:
  const Config& config_;
  std::string url_;  // .../tokenize
};

// The plan for the run: `local` (a tokenizer.json's, may be null) or one built from
// ServerTokenCounter for tokenizer: server; with count_chat_template, the overheads learned from
// the target at `base_url`. Returns `local` when there is nothing to learn. Throws
// ServerTokensError / std::runtime_error as above, ConfigError from ExactText.
std::shared_ptr<const TokenPlan> learn_token_plan(const Config& config, const std::string& base_url,
                                                  std::shared_ptr<const TokenPlan> local);

// Whether the run must ask the target before traffic.
inline bool needs_server_tokens(const Config& config) {
  return config.dataset.tokenizer_is_server() || config.dataset.count_chat_template;
}

}  // namespace convoy::controller
