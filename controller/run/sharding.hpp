// Rendezvous (highest-random-weight) hashing of correlation ids over live workers: an id always
// maps to the same worker while that worker lives, and removing a worker moves only its ids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::controller {

uint64_t stable_hash(std::string_view s);  // FNV-1a 64 + a 64-bit finalizer; same on every host

// The weight of `worker_id` for `key`; the highest weight wins.
uint64_t rendezvous_weight(uint64_t key_hash, uint64_t worker_hash);

// target.urls: the URL (an index below url_count) that a conversation family is pinned to, by
// rendezvous hash of the root's (the lead's) correlation id over the URL positions. A pure
// function of the id and url_count: the same whatever the number of workers, and adding a URL at
// the end moves only the families the new one wins (about 1 / url_count of them). 0 when
// url_count <= 1.
uint32_t pick_url(std::string_view root_correlation_id, size_t url_count);

class Sharder {
 public:
  void add_worker(const std::string& worker_id);
  void remove_worker(const std::string& worker_id);  // no-op for unknown ids
  bool empty() const { return workers_.empty(); }
  size_t size() const { return workers_.size(); }

  // The worker for `correlation_id`; "" when there are no workers.
  const std::string& pick(std::string_view correlation_id) const;

 private:
  struct Entry {
    std::string id;
    uint64_t hash;
  };
  std::vector<Entry> workers_;
};

}  // namespace convoy::controller
