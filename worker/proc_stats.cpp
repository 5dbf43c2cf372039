#include "worker/proc_stats.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace convoy::worker {

int64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long long size_pages = 0, resident_pages = 0;
  int n = std::fscanf(f, "%lld %lld", &size_pages, &resident_pages);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<int64_t>(resident_pages) * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

double CpuMeter::sample(int64_t now_ns) {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto tv_ns = [](const timeval& tv) {
    return static_cast<int64_t>(tv.tv_sec) * 1000000000 + static_cast<int64_t>(tv.tv_usec) * 1000;
  };
  int64_t cpu_ns = tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
  double pct = 0;
  if (last_wall_ns_ > 0 && now_ns > last_wall_ns_) {
    pct = 100.0 * static_cast<double>(cpu_ns - last_cpu_ns_) /
          static_cast<double>(now_ns - last_wall_ns_);
  }
  last_wall_ns_ = now_ns;
  last_cpu_ns_ = cpu_ns;
  return pct;
}

}  // namespace convoy::worker
