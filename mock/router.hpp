// Worker selection among the mock's simulated workers. Pure: the caller passes loads and the
// random source.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "mock/options.hpp"

namespace convoy::mock {

struct WorkerLoad {
  bool up = true;
  int64_t cached_blocks = 0;          // this request's prefix already in the worker's cache
  int64_t active_prefill_blocks = 0;  // blocks of requests queued or in prefill
  int64_t active_decode_blocks = 0;   // blocks of sequences decoding
};

// Dynamo's KV router cost: max(prefill + new - cached, 0) + decode, in blocks.
int64_t kv_cost(const WorkerLoad& load, int64_t new_blocks);

class Router {
 public:
  Router(RouterMode mode, uint64_t seed) : mode_(mode), rng_(seed) {}

  // Index of the chosen worker among the up ones, or -1 when none is up. Ties in kv mode are
  // broken at random (seeded), as Dynamo samples among equal-cost workers.
  int choose(const std::vector<WorkerLoad>& loads, int64_t new_blocks);
  void reseed(uint64_t seed) {
    rng_.seed(seed);
    cursor_ = 0;
  }

 private:
  RouterMode mode_;
  std::mt19937_64 rng_;
  uint64_t cursor_ = 0;  // round-robin position
};

}  // namespace convoy::mock
