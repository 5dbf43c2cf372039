#include "tokenizer/added.hpp"

#include "tokenizer/bpe.hpp"
#include "tokenizer/unicode.hpp"

namespace convoy::tokenizer {

namespace {

std::uint64_t edge_key(std::uint32_t node, unsigned char byte) {
  return (static_cast<std::uint64_t>(node) << 8) | byte;
}

// The last code point of s[0, end) and where it starts.
char32_t last_char(std::string_view s, std::size_t end, std::size_t* begin) {
  std::size_t b = end - 1;
  while (b > 0 && (static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) --b;
  *begin = b;
  std::size_t i = b;
  return utf8_next(s, i);
}

}  // namespace

void AddedMatcher::add(const AddedToken& token) {
  if (token.content.empty()) return;
  if (terminal_.empty()) terminal_.push_back(-1);  // the root
  std::uint32_t node = 0;
  for (const char c : token.content) {
    const auto byte = static_cast<unsigned char>(c);
    const auto [it, fresh] =
        edges_.try_emplace(edge_key(node, byte), static_cast<std::uint32_t>(terminal_.size()));
    if (fresh) terminal_.push_back(-1);
    node = it->second;
  }
  first_byte_[static_cast<unsigned char>(token.content[0])] = true;
  if (terminal_[node] < 0) {  // the first of two equal contents wins
    terminal_[node] = static_cast<int>(tokens_.size());
    tokens_.push_back(token);
  }
}

int AddedMatcher::longest_at(std::string_view s, std::size_t i) const {
  int best = -1;
  std::uint32_t node = 0;
  for (std::size_t k = i; k < s.size(); ++k) {
    const auto it = edges_.find(edge_key(node, static_cast<unsigned char>(s[k])));
    if (it == edges_.end()) break;
    node = it->second;
    if (terminal_[node] >= 0) best = terminal_[node];
  }
  return best;
}

// added_vocabulary.rs's split_with_indices: matches never overlap; a single_word match with a
// word character beside it is skipped (scanning resumes after it); lstrip never reaches back
// past the previous match.
void AddedMatcher::split(std::string_view s, std::vector<Segment>& out) const {
  std::size_t text_begin = 0;
  for (std::size_t i = 0; i < s.size();) {
    const int t = first_byte_[static_cast<unsigned char>(s[i])] ? longest_at(s, i) : -1;
    if (t < 0) {
      ++i;
      continue;
    }
    const AddedToken& tok = tokens_[static_cast<std::size_t>(t)];
    std::size_t start = i;
    std::size_t stop = i + tok.content.size();
    i = stop;
    if (tok.single_word) {
      std::size_t b = 0;
      const bool word_before = start > 0 && is_alphanumeric(last_char(s, start, &b));
      std::size_t j = stop;
      const bool word_after = stop < s.size() && is_alphanumeric(utf8_next(s, j));
      if (word_before || word_after) continue;
    }
    if (tok.lstrip) {
      std::size_t b = 0;
      while (start > text_begin && is_whitespace(last_char(s, start, &b))) start = b;
    }
    if (tok.rstrip) {
      for (std::size_t j = stop; j < s.size() && is_whitespace(utf8_next(s, j));) stop = j;
      i = stop;
    }
    if (start > text_begin) out.push_back({text_begin, start, kNoId});
    out.push_back({start, stop, tok.id});
    text_begin = stop;
  }
  if (text_begin < s.size()) out.push_back({text_begin, s.size(), kNoId});
}

}  // namespace convoy::tokenizer
