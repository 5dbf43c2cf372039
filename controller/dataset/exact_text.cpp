#include "controller/dataset/exact_text.hpp"

#include <algorithm>
#include <unordered_map>

#include "controller/config/config.hpp"

namespace convoy::controller {

namespace {

// Tag shapes counted up front: a conversation index has at most 20 digits, a sub-agent position
// at most 3 (dataset.subagents.count <= 16 today; 3 leaves room).
constexpr int kMaxIndexDigits = 20;
constexpr int kMaxSubagentDigits = 3;

bool ends_sentence(std::string_view word) {
  const char last = word.back();
  return last == '.' || last == '!' || last == '?';
}

std::string shape_of(std::string_view tag) {
  std::string shape(tag);
  for (char& c : shape) {
    if (c >= '0' && c <= '9') c = '7';
  }
  return shape;
}

}  // namespace

ExactText::ExactText(const Corpus& corpus, const TokenCounter& counter)
    : corpus_(corpus), source_(counter.source()) {
  const std::string_view text = corpus.text();
  // The corpus is words separated by single spaces and ends with one space.
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find(' ', begin);
    words_.push_back(Word{static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin), 0, 0});
    begin = end + 1;
  }
  // One count per distinct word: the corpus repeats its common words hundreds of times.
  const std::string anchor = "x";
  const int64_t anchor_tokens = counter.count(anchor);
  std::unordered_map<std::string_view, int32_t> spaced;
  std::unordered_map<std::string_view, int32_t> bare;
  bool sentence_start = true;
  bool any_single = false;
  for (size_t i = 0; i < words_.size(); ++i) {
    Word& w = words_[i];
    const std::string_view word = word_text(w);
    auto [it, fresh] = spaced.try_emplace(word, 0);
    if (fresh) {
      it->second =
          static_cast<int32_t>(counter.count(anchor + " " + std::string(word)) - anchor_tokens);
    }
    w.spaced = it->second;
    any_single = any_single || w.spaced == 1;
    if (sentence_start) {
      auto [b, new_bare] = bare.try_emplace(word, 0);
      if (new_bare) b->second = static_cast<int32_t>(counter.count(word));
      w.bare = b->second;
      sentence_starts_.push_back(static_cast<uint32_t>(i));
    }
    sentence_start = ends_sentence(word);
  }
  // The whole corpus as one text, and the sum of its words: equal when words add up.
  corpus_tokens_ = counter.count(text.substr(0, text.size() - 1));
  int64_t sum = words_.front().bare;
  for (size_t i = 1; i < words_.size(); ++i) sum += words_[i].spaced;
  if (sum != corpus_tokens_ || !any_single || words_.front().bare <= 0) {
    throw ConfigError("dataset.tokenizer: " + source_ + ": the corpus counts " +
                      std::to_string(corpus_tokens_) + " tokens as one text but " +
                      std::to_string(sum) +
                      " word by word: this tokenizer merges across spaces, so convoy cannot cut "
                      "prompts of an exact length with it");
  }
  for (int digits = 1; digits <= kMaxIndexDigits; ++digits) {
    const std::string index(static_cast<size_t>(digits), '7');
    const std::string lead = "[c" + index + "]";
    tag_shapes_[lead] = counter.count(lead);
    for (int sub = 1; sub <= kMaxSubagentDigits; ++sub) {
      const std::string child =
          "[c" + index + "s" + std::string(static_cast<size_t>(sub), '7') + "]";
      tag_shapes_[child] = counter.count(child);
    }
  }
}

std::string_view ExactText::word_text(const Word& w) const {
  return corpus_.text().substr(w.offset, w.bytes);
}

size_t ExactText::word_at(uint64_t position) const {
  const auto pos = static_cast<uint32_t>(position % corpus_.size_bytes());
  const auto it = std::lower_bound(words_.begin(), words_.end(), pos,
                                   [](const Word& w, uint32_t p) { return w.offset < p; });
  return it == words_.end() ? 0 : static_cast<size_t>(it - words_.begin());
}

void ExactText::append(std::string& out, uint64_t position, int64_t tokens, bool continues) const {
  if (tokens < 0) {
    throw ExactTokensError("cannot make a text of " + std::to_string(tokens) + " tokens");
  }
  if (tokens == 0) return;
  size_t i = word_at(position);
  if (!continues) {
    // The first sentence at or after i whose opening word fits.
    auto s = std::lower_bound(sentence_starts_.begin(), sentence_starts_.end(), i);
    for (size_t tried = 0;; ++tried, ++s) {
      if (s == sentence_starts_.end()) s = sentence_starts_.begin();
      if (tried == sentence_starts_.size()) {
        throw ExactTokensError("no sentence of the corpus opens with a word of at most " +
                               std::to_string(tokens) + " tokens");
      }
      if (words_[*s].bare <= tokens) break;
    }
    out.append(word_text(words_[*s]));
    tokens -= words_[*s].bare;
    i = *s + 1;
  }
  // A word of one token exists (checked in the constructor): the loop ends.
  while (tokens > 0) {
    if (i == words_.size()) i = 0;
    const Word& w = words_[i++];
    if (w.spaced > tokens) continue;
    out.push_back(' ');
    out.append(word_text(w));
    tokens -= w.spaced;
  }
}

int64_t ExactText::tag_tokens(std::string_view tag) const {
  const auto it = tag_shapes_.find(shape_of(tag));
  if (it == tag_shapes_.end()) {
    throw ExactTokensError("no token count for the tag '" + std::string(tag) + "'");
  }
  return it->second;
}

}  // namespace convoy::controller
