#include "controller/run/sharding.hpp"

#include <algorithm>

namespace convoy::controller {

namespace {
uint64_t mix64(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
const std::string kNoWorker;
}  // namespace

uint64_t stable_hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix64(h);
}

uint64_t rendezvous_weight(uint64_t key_hash, uint64_t worker_hash) {
  return mix64(key_hash ^ mix64(worker_hash + 0x9e3779b97f4a7c15ULL));
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
