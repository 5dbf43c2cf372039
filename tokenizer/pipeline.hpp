// The steps of tokenizer.json around the model: normalizers, pre-tokenizers and decoders, each
// as Hugging Face `tokenizers` 0.22 applies it (normalizers/, pre_tokenizers/, decoders/).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/regex.hpp"

namespace convoy::tokenizer {

struct NormalizerStep {
  enum class Kind { kNfc, kNfd, kNfkc, kNfkd, kPrepend, kReplace };
  Kind kind = Kind::kNfc;
  std::string literal;           // kReplace with a String pattern: what is replaced
  std::shared_ptr<Regex> regex;  // kReplace with a Regex pattern (literal unused)
  std::string content;           // kPrepend: what is prepended; kReplace: the replacement
};
// Applies steps in order to s.
void normalize(const std::vector<NormalizerStep>& steps, std::string& s);

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct PreTokenizerStep {
  enum class Kind { kSplit, kByteLevel, kMetaspace };
  Kind kind = Kind::kSplit;
  // kSplit (Digits is a kSplit on \p{N} or \p{N}+); kByteLevel with use_regex: GPT-2's pattern.
  std::shared_ptr<Regex> regex;  // null: split on literal instead
  std::string literal;           // the String pattern of a kSplit
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;            // kSplit: the pieces between matches are the matches
  bool add_prefix_space = false;  // kByteLevel: " " before each piece not starting with one
  std::string replacement;        // kMetaspace: the character that stands for " " (UTF-8)
  enum class Prepend { kAlways, kFirst, kNever };
  Prepend prepend = Prepend::kAlways;  // kMetaspace: when the replacement is prepended
  bool split = true;                   // kMetaspace: split before each replacement
};

// The pre-tokens of one normalized segment: spans into arena (steps that add text append it).
struct Pieces {
  std::string arena;
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // [begin, end) into arena, non-empty
  std::string_view view(std::size_t k) const {
    return std::string_view(arena).substr(spans[k].first, spans[k].second - spans[k].first);
  }
};
// Splits pieces in place by each step in order. first_segment: the pieces start the text
// (Metaspace's prepend_scheme "first").
void pre_tokenize(const std::vector<PreTokenizerStep>& steps, bool first_segment, Pieces& pieces);

struct DecoderStep {
  enum class Kind { kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace };
  Kind kind = Kind::kFuse;
  std::string pattern;    // kReplace: what is replaced; kMetaspace: the replacement character
  std::string content;    // kReplace: the replacement; kStrip: the character stripped
  std::size_t start = 0;  // kStrip: at most this many leading content characters go
  std::size_t stop = 0;   // kStrip: at most this many trailing content characters go
  bool prepend = true;    // kMetaspace: a leading " " of the first token goes
};
// The text of tokens (vocabulary strings) after steps; without steps, joined by spaces (as the
// reference does).
std::string decode_tokens(const std::vector<DecoderStep>& steps, std::vector<std::string> tokens);

}  // namespace convoy::tokenizer
