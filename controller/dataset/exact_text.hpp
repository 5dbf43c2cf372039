// Exact token counts for synthetic text (dataset.tokenizer; docs/datasets.md "Exact tokens").
//
// Encoding a 100,000-token prompt takes tens of milliseconds; building one must take under 5. So
// the corpus is counted once, word by word, and a prompt is a run of words whose counts add up
// to the target: a word after a space (" quick") is one pre-token in every tokenizer convoy
// reads (byte-level BPE splits before the space, Metaspace turns it into "▁quick"), so the count
// of a run of words is the sum of the words' counts. The constructor checks that over the whole
// corpus, and the tests check it by encoding what is sent.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "controller/dataset/corpus.hpp"

namespace convoy::controller {

// Counts the tokens of a text with no special tokens added: the local tokenizer (tokenizer.json)
// or the target's POST /tokenize. count() throws std::runtime_error when it cannot count.
class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  virtual int64_t count(std::string_view text) const = 0;
  // What the counts come from, for messages: "tokenizer /path/tokenizer.json" or
  // "POST http://host:port/tokenize".
  virtual std::string source() const = 0;
};

// A text cannot be made of exactly the tokens asked (a tag longer than the turn, a template
// overhead larger than the turn): what() says which and by how much.
struct ExactTokensError : std::runtime_error {
  using runtime_error::runtime_error;
};

class ExactText {
 public:
  // Counts each distinct word of `corpus` once after a space, and bare where a sentence starts,
  // and the cache-bust tag shapes ("[c12]", "[c12s3]"); then checks that the count of the whole
  // corpus equals the sum of its words'. Throws ConfigError naming counter.source() when they do
  // not add up (a tokenizer that merges across spaces cannot be cut by words) or when no word
  // is a single token. `corpus` must outlive this.
  ExactText(const Corpus& corpus, const TokenCounter& counter);

  // Appends prose of exactly `tokens` tokens (0: nothing): words of the corpus from the first
  // sentence that starts at or after `position`, modulo the corpus. With `continues` the text
  // follows other text (a tag) and every word comes after a space; otherwise the first word is
  // bare. Words that would overshoot are skipped, so the end is exact. Throws
  // ExactTokensError when tokens < 0.
  void append(std::string& out, uint64_t position, int64_t tokens, bool continues) const;

  // Tokens of a cache-bust tag: "[c" digits "]" or "[c" digits "s" digits "]". Every tokenizer
  // convoy reads splits digits into the same number of tokens for the same number of digits, so
  // the count depends only on the tag's shape, counted once in the constructor.
  int64_t tag_tokens(std::string_view tag) const;

  const std::string& source() const { return source_; }
  // Tokens of the whole corpus (one pass): for the measured-error table in the tests.
  int64_t corpus_tokens() const { return corpus_tokens_; }

 private:
  struct Word {
    uint32_t offset = 0;  // into corpus.text()
    uint32_t bytes = 0;   // > 0; no spaces inside
    int32_t spaced = 0;   // tokens of " " + word after other text (>= 1)
    int32_t bare = 0;     // tokens of the word opening a text; 0 when not a sentence start
  };
  size_t word_at(uint64_t position) const;  // the first word starting at or after position
  std::string_view word_text(const Word& w) const;

  const Corpus& corpus_;
  std::string source_;
  std::vector<Word> words_;                // in corpus order
  std::vector<uint32_t> sentence_starts_;  // indices of words_ with bare > 0, ascending
  std::unordered_map<std::string, int64_t> tag_shapes_;  // digits written as '7' -> tokens
  int64_t corpus_tokens_ = 0;
};

class RandomTokens;

// What a dataset needs to make exact text (dataset.tokenizer), built once before the run.
struct TokenPlan {
  // The local tokenizer, kept to count file datasets' rows; null with tokenizer: server (the run
  // sends no /tokenize request once traffic starts).
  std::shared_ptr<const TokenCounter> counter;
  std::shared_ptr<const ExactText> text;  // never null
  // dataset.text random_tokens: synthetic text drawn from the vocabulary instead of the corpus
  // (tags and template overheads still counted by `text`); null with dataset.text corpus.
  std::shared_ptr<const RandomTokens> random;
  // dataset.count_chat_template: tokens the server's chat template adds to turn 0 (the system
  // prompt's wrapper included) and to each later turn (the previous reply's wrapper included);
  // taken off the user text. 0 without count_chat_template.
  int64_t first_turn_overhead = 0;
  int64_t later_turn_overhead = 0;
};

}  // namespace convoy::controller
