// The BPE model of tokenizer.json: vocabulary, merges as a rank map, byte fallback, and a
// cache of the ids of each pre-token word. Same algorithm as Hugging Face `tokenizers`
// (models/bpe/word.rs): lowest rank first, leftmost on ties, via a min-heap over a linked
// list of symbols, so long words (Llama 2 and Gemma 3 encode a whole segment as one word)
// cost O(n log n).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace convoy::tokenizer {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using Vocab = std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>;

inline constexpr std::uint32_t kNoId = 0xFFFFFFFF;

struct BpeOptions {
  bool byte_level = false;       // words arrive as raw bytes; symbols are GPT-2 byte characters
  bool byte_fallback = false;    // a character missing from the vocabulary becomes <0xXX> ids
  bool ignore_merges = false;    // a word that is itself in the vocabulary is that one id
  bool fuse_unk = false;         // consecutive unknown characters are one unk id
  std::uint32_t unk_id = kNoId;  // kNoId: no unk token (unknown characters are dropped)
};

class Bpe {
 public:
  // merges: pairs of vocabulary strings in rank order (a later duplicate pair wins, as in the
  // reference). Throws std::invalid_argument naming a merge whose parts are not in vocab.
  Bpe(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
      BpeOptions options);

  // Appends the ids of word (non-empty) to out. Thread-safe.
  void tokenize(std::string_view word, std::vector<std::uint32_t>& out) const;

  const Vocab& vocab() const { return vocab_; }
  const BpeOptions& options() const { return options_; }
  void set_options(const BpeOptions& o) { options_ = o; }

 private:
  struct Merge {
    std::uint32_t rank;    // line of the merge in tokenizer.json (lower merges first)
    std::uint32_t new_id;  // id of the merged string
  };
  static std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
    return (static_cast<std::uint64_t>(a) << 32) | b;
  }
  const Merge* find_merge(std::uint32_t a, std::uint32_t b) const;
  void initial_symbols(std::string_view word, std::vector<std::uint32_t>& ids) const;
  void merge_word(std::string_view word, std::vector<std::uint32_t>& out) const;

  Vocab vocab_;
  std::unordered_map<std::uint64_t, Merge> merges_;
  BpeOptions options_;
  std::array<std::uint32_t, 256> byte_ids_{};      // byte_level: id of each byte's character
  std::array<std::uint32_t, 256> fallback_ids_{};  // byte_fallback: id of <0xXX>, or kNoId

  // Words shorter than kCacheMaxWordBytes; cleared when it holds kCacheMaxWords.
  static constexpr std::size_t kCacheMaxWordBytes = 256;
  static constexpr std::size_t kCacheMaxWords = 1 << 18;
  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::uint32_t>, StringHash, std::equal_to<>>
      cache_;
};

}  // namespace convoy::tokenizer
