// This process's CPU use and resident memory, for heartbeats.
#pragma once

#include <cstdint>

namespace convoy::worker {

int64_t resident_bytes();  // from /proc/self/statm; 0 when unavailable

// CPU percent of one core used since the previous call (first call: since process start).
class CpuMeter {
 public:
  double sample(int64_t now_ns);

 private:
  int64_t last_wall_ns_ = 0;
  int64_t last_cpu_ns_ = 0;
};

}  // namespace convoy::worker
