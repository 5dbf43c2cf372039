// The prose that synthetic prompts are cut from, and convoy's token estimate.
//
// Token estimate: 1 token ~= 4 bytes of English text (ceil(bytes / 4)). It is exactly what
// convoy-mock counts, so against the mock the requested and reported lengths agree; real
// tokenizers count 10-20% fewer tokens in this corpus's prose (docs/datasets.md measures six).
// dataset.tokenizer makes lengths exact instead (exact_text.hpp). When the server reports usage,
// records carry the server's counts instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace convoy::controller {

inline constexpr int64_t kBytesPerToken = 4;

// ceil(bytes / kBytesPerToken).
int64_t estimate_tokens(std::string_view text);
// The byte length that estimate_tokens maps to exactly `tokens` (0 for tokens <= 0).
size_t bytes_for_tokens(int64_t tokens);

class Corpus {
 public:
  // Normalizes `text`: every byte outside printable ASCII becomes a space and runs of spaces
  // collapse to one, so any excerpt is valid single-line UTF-8. Throws std::invalid_argument
  // when nothing printable remains.
  explicit Corpus(std::string_view text);

  // The corpus compiled into the binary from data/corpus.txt; loaded once, thread-safe.
  static const Corpus& embedded();

  std::string_view text() const { return text_; }
  size_t size_bytes() const { return text_.size(); }

  // Appends exactly `bytes` bytes of prose to `out`, starting at the first word that begins at
  // or after `position` (taken modulo the corpus size) and wrapping around at the end.
  void append_excerpt(std::string& out, uint64_t position, size_t bytes) const;
  std::string excerpt(uint64_t position, size_t bytes) const;

 private:
  std::string text_;  // normalized; ends with one space so a wrap joins two words cleanly
};

}  // namespace convoy::controller
