#include "mock/router.hpp"

#include <algorithm>
#include <limits>

namespace convoy::mock {

int64_t kv_cost(const WorkerLoad& load, int64_t new_blocks) {
  return std::max<int64_t>(load.active_prefill_blocks + new_blocks - load.cached_blocks, 0) +
         load.active_decode_blocks;
}

int Router::choose(const std::vector<WorkerLoad>& loads, int64_t new_blocks) {
  std::vector<int> candidates;
  candidates.reserve(loads.size());
  switch (mode_) {
    case RouterMode::kRoundRobin:
      for (size_t i = 0; i < loads.size(); ++i) {
        const size_t w = (cursor_ + i) % loads.size();
        if (!loads[w].up) continue;
        cursor_ = w + 1;
        return static_cast<int>(w);
      }
      return -1;
    case RouterMode::kRandom:
      for (size_t i = 0; i < loads.size(); ++i) {
        if (loads[i].up) candidates.push_back(static_cast<int>(i));
      }
      break;
    case RouterMode::kKv: {
      int64_t best = std::numeric_limits<int64_t>::max();
      for (size_t i = 0; i < loads.size(); ++i) {
        if (!loads[i].up) continue;
        const int64_t cost = kv_cost(loads[i], new_blocks);
        if (cost < best) {
          best = cost;
          candidates.clear();
        }
        if (cost == best) candidates.push_back(static_cast<int>(i));
      }
      break;
    }
  }
  if (candidates.empty()) return -1;
  if (candidates.size() == 1) return candidates.front();
  std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
  return candidates[pick(rng_)];
}

}  // namespace convoy::mock
