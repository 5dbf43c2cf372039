// Added tokens (tokenizer.json's added_tokens): found in the text before the model runs,
// leftmost-longest as Hugging Face `tokenizers` does (an Aho-Corasick automaton there, a byte
// trie here), each becoming its own id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace convoy::tokenizer {

struct AddedToken {
  std::string content;  // the exact text matched
  std::uint32_t id = 0;
  bool lstrip = false;       // the match swallows whitespace on its left
  bool rstrip = false;       // ... and on its right
  bool single_word = false;  // only matches with no alphanumeric character either side
};

// A piece of text: an added token's id, or text the model encodes (id == kNoId there).
struct Segment {
  std::size_t begin;  // byte offsets into the text split
  std::size_t end;
  std::uint32_t id;
};

class AddedMatcher {
 public:
  void add(const AddedToken& token);
  bool empty() const { return tokens_.empty(); }
  // The segments of s in order, covering s; text segments are non-empty.
  void split(std::string_view s, std::vector<Segment>& out) const;

 private:
  // The longest token that starts at s[i] (index into tokens_), or -1.
  int longest_at(std::string_view s, std::size_t i) const;

  std::vector<AddedToken> tokens_;
  std::vector<int> terminal_;  // per trie node: index into tokens_, or -1
  std::unordered_map<std::uint64_t, std::uint32_t> edges_;  // (node << 8 | byte) -> node
  bool first_byte_[256] = {};                               // bytes that start some token
};

}  // namespace convoy::tokenizer
