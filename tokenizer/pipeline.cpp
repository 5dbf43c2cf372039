#include "tokenizer/pipeline.hpp"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>

#include <algorithm>
#include <stdexcept>

#include "tokenizer/unicode.hpp"

namespace convoy::tokenizer {

namespace {

using Span = std::pair<std::size_t, std::size_t>;

const icu::Normalizer2* icu_normalizer(NormalizerStep::Kind kind) {
  UErrorCode ec = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (kind) {
    case NormalizerStep::Kind::kNfc:
      n = icu::Normalizer2::getNFCInstance(ec);
      break;
    case NormalizerStep::Kind::kNfd:
      n = icu::Normalizer2::getNFDInstance(ec);
      break;
    case NormalizerStep::Kind::kNfkc:
      n = icu::Normalizer2::getNFKCInstance(ec);
      break;
    default:
      n = icu::Normalizer2::getNFKDInstance(ec);
      break;
  }
  if (U_FAILURE(ec)) throw std::runtime_error(std::string("ICU normalizer: ") + u_errorName(ec));
  return n;
}

void unicode_normalize(NormalizerStep::Kind kind, std::string& s) {
  // ASCII is in every normalization form: most text never reaches ICU.
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return;
  const icu::Normalizer2* n = icu_normalizer(kind);
  UErrorCode ec = U_ZERO_ERROR;
  const icu::StringPiece in(s.data(), static_cast<std::int32_t>(s.size()));
  if (n->isNormalizedUTF8(in, ec) && U_SUCCESS(ec)) return;
  ec = U_ZERO_ERROR;
  std::string out;
  icu::StringByteSink<std::string> sink(&out, static_cast<std::int32_t>(s.size()));
  n->normalizeUTF8(0, in, sink, nullptr, ec);
  if (U_FAILURE(ec)) throw std::runtime_error(std::string("ICU normalize: ") + u_errorName(ec));
  s = std::move(out);
}

// Non-overlapping [begin, end) occurrences of a literal or a regex in s.
void find_matches(const std::shared_ptr<Regex>& regex, std::string_view literal, std::string_view s,
                  std::vector<Span>& out) {
  out.clear();
  if (regex) {
    regex->find_all(s, out);
    return;
  }
  if (literal.empty()) return;
  for (std::size_t at = s.find(literal); at != std::string_view::npos;
       at = s.find(literal, at + literal.size())) {
    out.emplace_back(at, at + literal.size());
  }
}

void replace_all(const NormalizerStep& step, std::string& s) {
  std::vector<Span> matches;
  find_matches(step.regex, step.literal, s, matches);
  if (matches.empty()) return;
  std::string out;
  out.reserve(s.size() + matches.size() * step.content.size());
  std::size_t prev = 0;
  for (const auto& [b, e] : matches) {
    out.append(s, prev, b - prev).append(step.content);
    prev = e;
  }
  out.append(s, prev, std::string::npos);
  s = std::move(out);
}

// pattern.rs's find_matches then normalizer.rs's split by behavior: the pieces of [0, n) as
// offsets relative to the piece, empty ones dropped.
void split_by_behavior(const std::vector<Span>& matches, std::size_t n,
                       const PreTokenizerStep& step, std::vector<Span>& out) {
  std::vector<std::pair<Span, bool>> parts;  // (range, is_match), covering [0, n)
  std::size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (prev != b) parts.push_back({{prev, b}, step.invert});
    parts.push_back({{b, e}, !step.invert});
    prev = e;
  }
  if (prev != n) parts.push_back({{prev, n}, step.invert});
  std::vector<Span> pieces;
  bool previous_match = false;
  switch (step.behavior) {
    case SplitBehavior::kRemoved:
      for (const auto& [r, m] : parts)
        if (!m) pieces.push_back(r);
      break;
    case SplitBehavior::kIsolated:
      for (const auto& [r, m] : parts) pieces.push_back(r);
      break;
    case SplitBehavior::kMergedWithPrevious:
    case SplitBehavior::kContiguous:
      for (const auto& [r, m] : parts) {
        const bool merge = step.behavior == SplitBehavior::kContiguous ? m == previous_match
                                                                       : m && !previous_match;
        if (merge && !pieces.empty()) {
          pieces.back().second = r.second;
        } else {
          pieces.push_back(r);
        }
        previous_match = m;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->second && !previous_match && !pieces.empty()) {
          pieces.back().first = it->first.first;
        } else {
          pieces.push_back(it->first);
        }
        previous_match = it->second;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
  }
  for (const Span& p : pieces)
    if (p.second > p.first) out.push_back(p);
}

// Splits each span of pieces by step's pattern and behavior.
void split_pieces(const PreTokenizerStep& step, Pieces& pieces) {
  thread_local std::vector<Span> next;  // scratch, reused: encoding allocates little
  thread_local std::vector<Span> matches;
  thread_local std::vector<Span> local;
  next.clear();
  for (std::size_t k = 0; k < pieces.spans.size(); ++k) {
    const std::string_view v = pieces.view(k);
    const std::size_t base = pieces.spans[k].first;
    find_matches(step.regex, step.literal, v, matches);
    if (step.behavior == SplitBehavior::kIsolated && !step.invert) {  // the usual case, direct
      std::size_t prev = 0;
      for (const auto& [b, e] : matches) {
        if (b > prev) next.emplace_back(base + prev, base + b);
        if (e > b) next.emplace_back(base + b, base + e);
        prev = e;
      }
      if (prev < v.size()) next.emplace_back(base + prev, base + v.size());
      continue;
    }
    local.clear();
    split_by_behavior(matches, v.size(), step, local);
    for (const auto& [b, e] : local) next.emplace_back(base + b, base + e);
  }
  pieces.spans.swap(next);
}

// Replaces each span by prefix + (its text with " " replaced by `space`) at the arena's end.
void rewrite_pieces(Pieces& pieces, const std::string& space, bool metaspace, bool first_segment,
                    const PreTokenizerStep& step) {
  for (std::size_t k = 0; k < pieces.spans.size(); ++k) {
    std::string text(pieces.view(k));
    if (metaspace) {
      NormalizerStep replace{NormalizerStep::Kind::kReplace, " ", nullptr, space};
      replace_all(replace, text);
      const bool want =
          step.prepend == PreTokenizerStep::Prepend::kAlways ||
          (step.prepend == PreTokenizerStep::Prepend::kFirst && first_segment && k == 0);
      if (want && text.rfind(space, 0) != 0) text.insert(0, space);
    } else if (text.front() != ' ') {
      text.insert(0, " ");
    }
    const std::size_t begin = pieces.arena.size();
    pieces.arena += text;
    pieces.spans[k] = {begin, pieces.arena.size()};
  }
}

}  // namespace

void normalize(const std::vector<NormalizerStep>& steps, std::string& s) {
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case NormalizerStep::Kind::kPrepend:
        if (!s.empty()) s.insert(0, step.content);
        break;
      case NormalizerStep::Kind::kReplace:
        replace_all(step, s);
        break;
      default:
        unicode_normalize(step.kind, s);
        break;
    }
  }
}

void pre_tokenize(const std::vector<PreTokenizerStep>& steps, bool first_segment, Pieces& pieces) {
  for (const PreTokenizerStep& step : steps) {
    switch (step.kind) {
      case PreTokenizerStep::Kind::kSplit:
        split_pieces(step, pieces);
        break;
      case PreTokenizerStep::Kind::kByteLevel:
        if (step.add_prefix_space) rewrite_pieces(pieces, " ", false, first_segment, step);
        if (step.regex) split_pieces(step, pieces);
        break;
      case PreTokenizerStep::Kind::kMetaspace:
        rewrite_pieces(pieces, step.replacement, true, first_segment, step);
        if (step.split) {
          PreTokenizerStep on_space;
          on_space.literal = step.replacement;
          on_space.behavior = SplitBehavior::kMergedWithNext;
          split_pieces(on_space, pieces);
        }
        break;
    }
  }
}

}  // namespace convoy::tokenizer
