#include "controller/run/sharding.hpp"

#include <algorithm>

#include "common/hash.hpp"

namespace convoy::controller {

namespace {
const std::string kNoWorker;
}  // namespace

uint64_t stable_hash(std::string_view s) { return splitmix64_finalize(fnv1a64(s)); }

uint64_t rendezvous_weight(uint64_t key_hash, uint64_t worker_hash) {
  return splitmix64_finalize(key_hash ^ splitmix64(worker_hash));
}

uint32_t pick_url(std::string_view root_correlation_id, size_t url_count) {
  if (url_count <= 1) return 0;
  const uint64_t key = stable_hash(root_correlation_id);
  uint32_t best = 0;
  uint64_t best_weight = 0;
  for (size_t i = 0; i < url_count; ++i) {
    // A URL is its position, hashed in a domain of its own (never a worker id's hash).
    const uint64_t w = rendezvous_weight(key, splitmix64_finalize(i + 0x75726c00ull));  // "url\0"
    if (i == 0 || w > best_weight) {  // ties (astronomically rare) keep the lower index
      best = static_cast<uint32_t>(i);
      best_weight = w;
    }
  }
  return best;
}

void Sharder::add_worker(const std::string& worker_id) {
  auto it = std::find_if(workers_.begin(), workers_.end(),
                         [&](const Entry& e) { return e.id == worker_id; });
  if (it == workers_.end()) workers_.push_back({worker_id, stable_hash(worker_id)});
}

void Sharder::remove_worker(const std::string& worker_id) {
  std::erase_if(workers_, [&](const Entry& e) { return e.id == worker_id; });
}

const std::string& Sharder::pick(std::string_view correlation_id) const {
  const Entry* best = nullptr;
  uint64_t best_weight = 0;
  uint64_t key = stable_hash(correlation_id);
  for (const Entry& e : workers_) {
    uint64_t w = rendezvous_weight(key, e.hash);
    // Ties (astronomically rare) break by id so the choice never depends on insertion order.
    if (!best || w > best_weight || (w == best_weight && e.id < best->id)) {
      best = &e;
      best_weight = w;
    }
  }
  return best ? best->id : kNoWorker;
}

}  // namespace convoy::controller
