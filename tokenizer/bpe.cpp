#include "tokenizer/bpe.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "tokenizer/unicode.hpp"

namespace convoy::tokenizer {

namespace {

struct Symbol {
  std::uint32_t id;
  std::int32_t prev;  // index of the previous live symbol, -1 for the first
  std::int32_t next;  // index of the next live symbol, -1 for the last
  bool live;          // false once merged into its left neighbour
};

struct Candidate {
  std::uint32_t rank;
  std::int32_t pos;
  std::uint32_t new_id;
  // A max-heap of these has the lowest rank on top, then the lowest position.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

Bpe::Bpe(Vocab vocab, const std::vector<std::pair<std::string_view, std::string_view>>& merges,
         BpeOptions options)
    : vocab_(std::move(vocab)), options_(options) {
  merges_.reserve(merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    joined.assign(a).append(b);
    const std::uint32_t* ia = vocab_.find(a);
    const std::uint32_t* ib = vocab_.find(b);
    const std::uint32_t* ij = vocab_.find(joined);
    if (ia == nullptr || ib == nullptr || ij == nullptr) {
      throw std::invalid_argument("merge " + std::to_string(rank) + " (\"" + std::string(a) +
                                  "\" \"" + std::string(b) +
                                  "\") names a string not in the vocabulary");
    }
    merges_.insert(*ia, *ib, {static_cast<std::uint32_t>(rank), *ij});
  }
  const auto& chars = byte_level_chars();
  std::array<char, 8> hex{};
  for (std::size_t b = 0; b < 256; ++b) {
    const std::uint32_t* ic = vocab_.find(chars[b]);
    byte_ids_[b] = ic == nullptr ? kNoId : *ic;
    std::snprintf(hex.data(), hex.size(), "<0x%02X>", static_cast<unsigned>(b));
    const std::uint32_t* ih = vocab_.find(std::string_view(hex.data()));
    fallback_ids_[b] = ih == nullptr ? kNoId : *ih;
  }
  find_metaspace_joins();
}

void Bpe::find_metaspace_joins() {
  const std::string_view space = "\xE2\x96\x81";  // U+2581
  if (options_.byte_level || options_.ignore_merges || vocab_.find(space) == nullptr) return;
  metaspace_splits_ = true;
  vocab_.for_each([&](std::string_view token, std::uint32_t) {
    std::size_t prev = 0;  // start of the previous character
    for (std::size_t i = 0; i < token.size(); i += utf8_length(token, i)) {
      if (i > 0 && token.compare(i, space.size(), space) == 0 &&
          token.compare(prev, space.size(), space) != 0) {
        metaspace_joins_.insert(token.substr(prev, i - prev), 0);
      }
      prev = i;
    }
  });
}

void Bpe::tokenize_long(std::string_view word, std::vector<std::uint32_t>& out) const {
  if (!metaspace_splits_) {
    tokenize(word, out);
    return;
  }
  const std::string_view space = "\xE2\x96\x81";
  std::size_t begin = 0;
  std::size_t prev = 0;
  for (std::size_t i = 0; i < word.size(); i += utf8_length(word, i)) {
    if (i > 0 && word.compare(i, space.size(), space) == 0) {
      const std::string_view x = word.substr(prev, i - prev);
      if (x != space && vocab_.find(x) != nullptr && metaspace_joins_.find(x) == nullptr) {
        tokenize(word.substr(begin, i - begin), out);
        begin = i;
      }
    }
    prev = i;
  }
  tokenize(word.substr(begin), out);
}

const Bpe::Merge* Bpe::find_merge(std::uint32_t a, std::uint32_t b) const {
  return merges_.find(a, b);
}

// One symbol per character (per byte for byte-level), as word.rs's merge_word: a character
// missing from the vocabulary becomes its <0xXX> bytes when all exist, else unk (fused when
// fuse_unk). A pending unk is flushed by the next known character only, not by byte-fallback
// ids (word.rs's order, kept for exactness).
void Bpe::initial_symbols(std::string_view word, std::vector<std::uint32_t>& ids) const {
  bool pending_unk = false;
  for (std::size_t i = 0; i < word.size();) {
    std::uint32_t id = kNoId;
    std::size_t n = 1;
    if (options_.byte_level) {
      id = byte_ids_[static_cast<unsigned char>(word[i])];
    } else {
      n = utf8_length(word, i);
      const std::uint32_t* found = vocab_.find(word.substr(i, n));
      if (found != nullptr) id = *found;
    }
    const std::string_view ch = word.substr(i, n);
    i += n;
    if (id != kNoId) {
      if (pending_unk) ids.push_back(options_.unk_id);
      pending_unk = false;
      ids.push_back(id);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (const char c : ch) all = all && fallback_ids_[static_cast<unsigned char>(c)] != kNoId;
      if (all) {
        for (const char c : ch) ids.push_back(fallback_ids_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (options_.unk_id == kNoId) continue;
    if (pending_unk && !options_.fuse_unk) ids.push_back(options_.unk_id);
    pending_unk = true;
  }
  if (pending_unk) ids.push_back(options_.unk_id);
}

void Bpe::merge_word(std::string_view word, std::vector<std::uint32_t>& out) const {
  thread_local std::vector<std::uint32_t> ids;  // scratch, reused: a miss allocates nothing
  thread_local std::vector<Symbol> sym;
  thread_local std::vector<Candidate> heap;  // std::push_heap order: the top merges first
  ids.clear();
  sym.clear();
  heap.clear();
  initial_symbols(word, ids);
  const auto count = static_cast<std::int32_t>(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const auto pos = static_cast<std::int32_t>(k);
    sym.push_back({ids[k], pos - 1, pos + 1 < count ? pos + 1 : -1, true});
    if (k + 1 < ids.size()) {
      if (const Merge* m = find_merge(ids[k], ids[k + 1]))
        heap.push_back({m->rank, pos, m->new_id});
    }
  }
  std::make_heap(heap.begin(), heap.end());
  const auto push = [&](Candidate c) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end());
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = sym[static_cast<std::size_t>(top.pos)];
    if (!left.live || left.next < 0) continue;
    Symbol& right = sym[static_cast<std::size_t>(left.next)];
    // A stale entry: the pair at pos no longer merges into the same id (word.rs checks the
    // same thing, and only that).
    const Merge* now = find_merge(left.id, right.id);
    if (now == nullptr || now->new_id != top.new_id) continue;
    left.id = top.new_id;
    right.live = false;
    left.next = right.next;
    if (right.next >= 0) sym[static_cast<std::size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0) {
      if (const Merge* m = find_merge(sym[static_cast<std::size_t>(left.prev)].id, left.id)) {
        push({m->rank, left.prev, m->new_id});
      }
    }
    if (left.next >= 0) {
      if (const Merge* m = find_merge(left.id, sym[static_cast<std::size_t>(left.next)].id)) {
        push({m->rank, top.pos, m->new_id});
      }
    }
  }
  for (const Symbol& s : sym) {
    if (s.live) out.push_back(s.id);
  }
}

void Bpe::tokenize(std::string_view word, std::vector<std::uint32_t>& out) const {
  const bool cacheable = word.size() < kCacheMaxWordBytes;
  if (cacheable) {
    std::shared_lock lock(cache_mutex_);
    if (const std::uint32_t* at = cache_index_.find(word)) {
      const auto* first = cache_ids_.data() + *at + 1;
      out.insert(out.end(), first, first + cache_ids_[*at]);
      return;
    }
  }
  std::vector<std::uint32_t> ids;
  if (options_.ignore_merges) {
    std::string mapped;
    if (options_.byte_level) {
      for (const char c : word) mapped += byte_level_chars()[static_cast<unsigned char>(c)];
    }
    const std::uint32_t* found = vocab_.find(options_.byte_level ? std::string_view(mapped) : word);
    if (found != nullptr) ids.push_back(*found);
  }
  if (ids.empty()) merge_word(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::unique_lock lock(cache_mutex_);
    if (cache_index_.size() >= kCacheMaxWords || cache_ids_.size() >= kCacheMaxIds) {
      cache_index_.clear();
      cache_ids_.clear();
    }
    if (cache_index_.find(word) == nullptr) {
      cache_index_.insert(word, static_cast<std::uint32_t>(cache_ids_.size()));
      cache_ids_.push_back(static_cast<std::uint32_t>(ids.size()));
      cache_ids_.insert(cache_ids_.end(), ids.begin(), ids.end());
    }
  }
}

}  // namespace convoy::tokenizer
