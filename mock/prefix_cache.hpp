// One simulated worker's prefix KV cache: chained block hashes with LRU eviction.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace convoy::mock {

class PrefixCache {
 public:
  explicit PrefixCache(int64_t capacity_blocks) : capacity_blocks_(capacity_blocks) {}

  // Number of leading blocks of `hashes` present (the longest cached prefix). Read-only.
  int64_t match(const std::vector<uint64_t>& hashes) const;
  // Inserts (or refreshes) every block of the sequence as most recently used; evicts the
  // least recently used blocks beyond capacity.
  void insert(const std::vector<uint64_t>& hashes);
  void clear();

  int64_t size_blocks() const { return static_cast<int64_t>(index_.size()); }
  int64_t capacity_blocks() const { return capacity_blocks_; }
  int64_t evicted_blocks() const { return evicted_blocks_; }

 private:
  int64_t capacity_blocks_;
  int64_t evicted_blocks_ = 0;
  std::list<uint64_t> lru_;  // front = most recently used
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> index_;
};

}  // namespace convoy::mock
