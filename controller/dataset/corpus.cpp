#include "controller/dataset/corpus.hpp"

#include <algorithm>
#include <stdexcept>

namespace convoy::controller {

namespace detail {
// Generated at build time from data/corpus.txt (see controller/CMakeLists.txt).
extern const unsigned char kCorpusBytes[];
extern const size_t kCorpusSize;
}  // namespace detail

int64_t estimate_tokens(std::string_view text) {
  const auto bytes = static_cast<int64_t>(text.size());
  return (bytes + kBytesPerToken - 1) / kBytesPerToken;
}

size_t bytes_for_tokens(int64_t tokens) {
  return tokens <= 0 ? 0 : static_cast<size_t>(tokens * kBytesPerToken);
}

Corpus::Corpus(std::string_view text) {
  text_.reserve(text.size() + 1);
  for (const char c : text) {
    const bool printable = c > ' ' && c < 0x7F;
    if (printable) {
      text_.push_back(c);
    } else if (!text_.empty() && text_.back() != ' ') {
      text_.push_back(' ');
    }
  }
  if (text_.empty()) throw std::invalid_argument("corpus has no printable text");
  if (text_.back() != ' ') text_.push_back(' ');
}

const Corpus& Corpus::embedded() {
  static const Corpus corpus(
      std::string_view(reinterpret_cast<const char*>(detail::kCorpusBytes), detail::kCorpusSize));
  return corpus;
}

void Corpus::append_excerpt(std::string& out, uint64_t position, size_t bytes) const {
  const size_t size = text_.size();
  auto pos = static_cast<size_t>(position % size);
  if (pos != 0 && text_[pos - 1] != ' ') {
    // Move to the start of the next word (wrapping: the text ends with a space).
    const size_t space = text_.find(' ', pos);
    pos = space + 1 == size ? 0 : space + 1;
  }
  out.reserve(out.size() + bytes);
  while (bytes > 0) {
    const size_t n = std::min(bytes, size - pos);
    out.append(text_, pos, n);
    bytes -= n;
    pos = 0;
  }
}

std::string Corpus::excerpt(uint64_t position, size_t bytes) const {
  std::string out;
  append_excerpt(out, position, bytes);
  return out;
}

}  // namespace convoy::controller
