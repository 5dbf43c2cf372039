#include "mock/prefix_cache.hpp"

namespace convoy::mock {

int64_t PrefixCache::match(const std::vector<uint64_t>& hashes) const {
  int64_t matched = 0;
  for (const uint64_t h : hashes) {
    if (index_.find(h) == index_.end()) break;
    ++matched;
  }
  return matched;
}

void PrefixCache::insert(const std::vector<uint64_t>& hashes) {
  // Insert from the last block to the first so that the prefix ends up most recent: eviction
  // then removes the tails of sequences before their heads, which keeps prefixes matchable.
  for (auto it = hashes.rbegin(); it != hashes.rend(); ++it) {
    const auto found = index_.find(*it);
    if (found != index_.end()) {
      lru_.splice(lru_.begin(), lru_, found->second);
      continue;
    }
    lru_.push_front(*it);
    index_.emplace(*it, lru_.begin());
  }
  while (static_cast<int64_t>(index_.size()) > capacity_blocks_) {
    index_.erase(lru_.back());
    lru_.pop_back();
    ++evicted_blocks_;
  }
}

void PrefixCache::clear() {
  lru_.clear();
  index_.clear();
  evicted_blocks_ = 0;
}

}  // namespace convoy::mock
