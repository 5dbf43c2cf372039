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
#include <vector>

#include "tokenizer/flat_map.hpp"

namespace convoy::tokenizer {

using Vocab = StringTable;

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
  Bpe(Vocab vocab, const std::vector<std::pair<std::string_view, std::string_view>>& merges,
      BpeOptions options);

  // Appends the ids of word (non-empty) to out. Thread-safe.
  void tokenize(std::string_view word, std::vector<std::uint32_t>& out) const;
  // The same ids, splitting word first where no merge can cross (see metaspace_splits).
  void tokenize_long(std::string_view word, std::vector<std::uint32_t>& out) const;

  const Vocab& vocab() const { return vocab_; }
  const BpeOptions& options() const { return options_; }

 private:
  using Merge = PairTable::Value;
  const Merge* find_merge(std::uint32_t a, std::uint32_t b) const;
  void initial_symbols(std::string_view word, std::vector<std::uint32_t>& ids) const;
  void merge_word(std::string_view word, std::vector<std::uint32_t>& out) const;
  void find_metaspace_joins();

  // Llama 2 and Gemma 3 hand the model a whole segment as one word ("▁" for each space). A
  // merge can only make a vocabulary string, so where the text has "x▁" and no vocabulary
  // string holds "x▁", nothing merges across: the word splits there into cacheable words with
  // the same ids. x must be a one-character vocabulary string (not byte fallback) other than
  // "▁"; metaspace_joins_ holds the x that some vocabulary string puts before a "▁" (Gemma 3:
  // ">", for ">▁</"). Off for byte-level models and ignore_merges.
  bool metaspace_splits_ = false;
  StringTable metaspace_joins_;
  Vocab vocab_;
  PairTable merges_;
  BpeOptions options_;
  std::array<std::uint32_t, 256> byte_ids_{};      // byte_level: id of each byte's character
  std::array<std::uint32_t, 256> fallback_ids_{};  // byte_fallback: id of <0xXX>, or kNoId

  // Words shorter than kCacheMaxWordBytes; cleared when it holds kCacheMaxWords words or
  // kCacheMaxIds ids (so at most ~24 MB, whatever the text).
  static constexpr std::size_t kCacheMaxWordBytes = 256;
  static constexpr std::size_t kCacheMaxWords = 1 << 18;
  static constexpr std::size_t kCacheMaxIds = 1 << 22;
  mutable std::shared_mutex cache_mutex_;
  // word -> offset in cache_ids_, where its id count and then its ids are.
  mutable StringTable cache_index_;
  mutable std::vector<std::uint32_t> cache_ids_;
};

}  // namespace convoy::tokenizer
