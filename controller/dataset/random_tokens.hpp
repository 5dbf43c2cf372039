// dataset.text: random_tokens: synthetic text made of tokens drawn uniformly from the
// tokenizer's vocabulary, so that no two prompts share more than a chance token or two and a
// prefix cache finds nothing to reuse (docs/datasets.md "Random-token prompts").
//
// Concatenated tokens can merge when the text is encoded again (" a" + "b" is " ab"), so the
// draw is over the vocabulary's single-token words: ids whose text after other text is a space
// and ASCII letters (" the", " Hello") and encodes back to exactly one token there. A word after
// a space is one pre-token in every tokenizer convoy reads, so n drawn words are exactly n
// tokens. A text's first word is drawn from the words that are one token opening a text too:
// with its space (byte-level BPE), or without it where the tokenizer adds one itself (Llama 2's
// Metaspace normalizer turns " the" into two tokens and "the" into one). The constructor checks
// both on long draws, and the tests by encoding what is sent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/dataset/exact_text.hpp"

namespace convoy::controller {

class RandomTokens {
 public:
  // `decode(id)` is the text of token id (0 <= id < vocab_size) after other text. Throws
  // ConfigError naming counter.source() when the vocabulary has no such words or they do not add
  // up.
  RandomTokens(const TokenCounter& counter, uint32_t vocab_size,
               const std::function<std::string(uint32_t)>& decode);

  // Appends exactly `tokens` words, each drawn uniformly (a generator seeded by `position`);
  // with `continues` the text follows other text and every word is a space and letters,
  // otherwise the first is drawn from the words that open a text (as they open one). Throws
  // ExactTokensError when tokens < 0.
  void append(std::string& out, uint64_t position, int64_t tokens, bool continues) const;

  size_t words() const { return starts_.size() - 1; }
  size_t openers() const { return openers_.size(); }
  size_t max_word_bytes() const { return max_word_bytes_; }

 private:
  std::string_view word(size_t i) const;

  std::string text_;               // every word, each with its leading space
  std::vector<uint32_t> starts_;   // word i is text_[starts_[i], starts_[i + 1])
  std::vector<uint32_t> openers_;  // words that are one token opening a text, as they open one
  bool bare_openings_ = false;     // a text opens with its first word's space left out
  size_t max_word_bytes_ = 0;
};

}  // namespace convoy::controller
