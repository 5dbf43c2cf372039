#include "tokenizer/bpe.hpp"

#include <array>
#include <cstdio>
#include <mutex>
#include <queue>
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
  // std::priority_queue is a max-heap: the top is the lowest rank, then the lowest position.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

Bpe::Bpe(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
         BpeOptions options)
    : vocab_(std::move(vocab)), options_(options) {
  merges_.reserve(merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    joined.assign(a).append(b);
    const auto ia = vocab_.find(a);
    const auto ib = vocab_.find(b);
    const auto ij = vocab_.find(joined);
    if (ia == vocab_.end() || ib == vocab_.end() || ij == vocab_.end()) {
      throw std::invalid_argument("merge " + std::to_string(rank) + " (\"" + a + "\" \"" + b +
                                  "\") names a string not in the vocabulary");
    }
    merges_[pair_key(ia->second, ib->second)] = {static_cast<std::uint32_t>(rank), ij->second};
  }
  const auto& chars = byte_level_chars();
  std::array<char, 8> hex{};
  for (std::size_t b = 0; b < 256; ++b) {
    const auto ic = vocab_.find(chars[b]);
    byte_ids_[b] = ic == vocab_.end() ? kNoId : ic->second;
    std::snprintf(hex.data(), hex.size(), "<0x%02X>", static_cast<unsigned>(b));
    const auto ih = vocab_.find(std::string_view(hex.data()));
    fallback_ids_[b] = ih == vocab_.end() ? kNoId : ih->second;
  }
}

const Bpe::Merge* Bpe::find_merge(std::uint32_t a, std::uint32_t b) const {
  const auto it = merges_.find(pair_key(a, b));
  return it == merges_.end() ? nullptr : &it->second;
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
      const auto it = vocab_.find(word.substr(i, n));
      if (it != vocab_.end()) id = it->second;
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
  std::vector<std::uint32_t> ids;
  ids.reserve(word.size());
  initial_symbols(word, ids);
  const auto count = static_cast<std::int32_t>(ids.size());
  std::vector<Symbol> sym(ids.size());
  std::vector<Candidate> heap_store;
  heap_store.reserve(ids.size());
  for (std::int32_t k = 0; k < count; ++k) {
    sym[static_cast<std::size_t>(k)] = {ids[static_cast<std::size_t>(k)], k - 1,
                                        k + 1 < count ? k + 1 : -1, true};
    if (k + 1 < count) {
      if (const Merge* m =
              find_merge(ids[static_cast<std::size_t>(k)], ids[static_cast<std::size_t>(k + 1)])) {
        heap_store.push_back({m->rank, k, m->new_id});
      }
    }
  }
  std::priority_queue<Candidate> heap(std::less<Candidate>{}, std::move(heap_store));
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
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
        heap.push({m->rank, left.prev, m->new_id});
      }
    }
    if (left.next >= 0) {
      if (const Merge* m = find_merge(left.id, sym[static_cast<std::size_t>(left.next)].id)) {
        heap.push({m->rank, top.pos, m->new_id});
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
    const auto it = cache_.find(word);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<std::uint32_t> ids;
  if (options_.ignore_merges) {
    std::string mapped;
    if (options_.byte_level) {
      for (const char c : word) mapped += byte_level_chars()[static_cast<unsigned char>(c)];
    }
    const auto it = vocab_.find(options_.byte_level ? std::string_view(mapped) : word);
    if (it != vocab_.end()) ids.push_back(it->second);
  }
  if (ids.empty()) merge_word(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::unique_lock lock(cache_mutex_);
    if (cache_.size() >= kCacheMaxWords) cache_.clear();
    cache_.emplace(word, std::move(ids));
  }
}

}  // namespace convoy::tokenizer
