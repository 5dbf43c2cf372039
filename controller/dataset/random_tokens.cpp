#include "controller/dataset/random_tokens.hpp"

#include <algorithm>

#include "controller/config/config.hpp"
#include "controller/dataset/rng.hpp"

namespace convoy::controller {

namespace {

// A space and one or more ASCII letters.
bool is_spaced_word(const std::string& text) {
  if (text.size() < 2 || text[0] != ' ') return false;
  return std::all_of(text.begin() + 1, text.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); });
}

// Words drawn for the constructor's check: enough that a merge between common pairs shows.
constexpr int64_t kCheckWords = 4096;

}  // namespace

RandomTokens::RandomTokens(const TokenCounter& counter, uint32_t vocab_size,
                           const std::function<std::string(uint32_t)>& decode) {
  const std::string anchor = "x";
  const int64_t anchor_tokens = counter.count(anchor);
  std::vector<uint32_t> spaced_openers;
  std::vector<uint32_t> bare_openers;
  starts_.push_back(0);
  for (uint32_t id = 0; id < vocab_size; ++id) {
    const std::string w = decode(id);
    if (!is_spaced_word(w) || counter.count(anchor + w) != anchor_tokens + 1) continue;
    const auto index = static_cast<uint32_t>(words());
    if (counter.count(w) == 1) spaced_openers.push_back(index);
    if (counter.count(std::string_view(w).substr(1)) == 1) bare_openers.push_back(index);
    text_ += w;
    starts_.push_back(static_cast<uint32_t>(text_.size()));
    max_word_bytes_ = std::max(max_word_bytes_, w.size());
  }
  // The form most words open a text in: Llama 2 adds a space of its own, byte-level BPE does not.
  bare_openings_ = bare_openers.size() > spaced_openers.size();
  openers_ = bare_openings_ ? std::move(bare_openers) : std::move(spaced_openers);
  if (openers_.empty()) {
    throw ConfigError("dataset.text: random_tokens: " + counter.source() +
                      " has no token that is a space and letters after other text and one token "
                      "opening a text");
  }
  std::string opening;
  append(opening, 0, kCheckWords, false);
  std::string continued = anchor;
  append(continued, 1, kCheckWords, true);
  const int64_t opened = counter.count(opening);
  const int64_t followed = counter.count(continued) - anchor_tokens;
  if (opened != kCheckWords || followed != kCheckWords) {
    throw ConfigError("dataset.text: random_tokens: " + counter.source() + " counts " +
                      std::to_string(kCheckWords) + " drawn words as " +
                      std::to_string(opened != kCheckWords ? opened : followed) +
                      " tokens: this tokenizer merges across spaces, so convoy cannot make "
                      "prompts of an exact length from its vocabulary");
  }
}

std::string_view RandomTokens::word(size_t i) const {
  return std::string_view(text_).substr(starts_[i], starts_[i + 1] - starts_[i]);
}

void RandomTokens::append(std::string& out, uint64_t position, int64_t tokens,
                          bool continues) const {
  if (tokens < 0) {
    throw ExactTokensError("cannot make a text of " + std::to_string(tokens) + " tokens");
  }
  Rng draw(position);
  int64_t i = 0;
  if (!continues && tokens > 0) {
    const std::string_view first = word(openers_[draw.below(openers_.size())]);
    out.append(bare_openings_ ? first.substr(1) : first);
    i = 1;
  }
  for (; i < tokens; ++i) out.append(word(draw.below(words())));
}

}  // namespace convoy::controller
