// The tokenizer's speed on one core: load time of each tokenizer.json, and
// encode throughput per CPU second over the tests' multilingual corpus, first pass (word cache
// cold) and second pass (warm). Usage: tokenizer_bench DIR... (each a folder holding
// tokenizer.json, e.g. `scripts/tokenizers qwen3`). Figures: docs/benchmarks.md.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tokenizer/corpus.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU seconds of this thread: the per-core figure, whatever else shares the machine.
double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long max_rss_mib() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

struct Corpus {
  const char* name;
  std::vector<std::string> docs;
  std::size_t bytes = 0;
};

// MB per CPU second over corpus: the first pass (word cache cold), then the second (warm).
void encode_rates(const convoy::tokenizer::Tokenizer& tok, const Corpus& c) {
  double rate[2] = {};
  std::size_t tokens = 0;
  for (double& r : rate) {
    tokens = 0;
    const double t0 = thread_cpu_s();
    for (const std::string& d : c.docs) tokens += tok.count(d);
    r = static_cast<double>(c.bytes) / 1e6 / (thread_cpu_s() - t0);
  }
  std::printf("  %-6s encode %6.1f MB/s cold %6.1f MB/s warm (%.2f bytes/token)\n", c.name, rate[0],
              rate[1], static_cast<double>(c.bytes) / static_cast<double>(tokens));
}

void bench(const std::string& dir, const std::vector<Corpus>& corpora) {
  double best_wall_s = 1e9;
  double best_cpu_s = 1e9;
  std::unique_ptr<convoy::tokenizer::Tokenizer> tok;
  for (int k = 0; k < 3; ++k) {
    tok.reset();
    const auto t0 = Clock::now();
    const double c0 = thread_cpu_s();
    tok = convoy::tokenizer::Tokenizer::load(dir);
    best_cpu_s = std::min(best_cpu_s, thread_cpu_s() - c0);
    best_wall_s = std::min(best_wall_s, seconds_since(t0));
  }
  std::printf("%s\n  load %.3f s wall, %.3f s CPU (vocab %zu, max RSS %ld MiB)\n", dir.c_str(),
              best_wall_s, best_cpu_s, tok->vocab_size(), max_rss_mib());
  for (const Corpus& c : corpora) encode_rates(*tok, c);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tokenizer_bench DIR...  (DIR: a folder with tokenizer.json)\n");
    return 2;
  }
  // The tests' corpus without specials (they vary by tokenizer), 8 MB each: "mixed" holds 20%
  // random characters (each such word new to the cache), "prose" only recurring fragments.
  std::vector<Corpus> corpora;
  corpora.push_back({"mixed", convoy::test::build_corpus({}, 8U << 20, 31, true)});
  corpora.push_back({"prose", convoy::test::build_corpus({}, 8U << 20, 31, false)});
  for (Corpus& c : corpora) {
    for (const auto& d : c.docs) c.bytes += d.size();
  }
  try {
    for (int i = 1; i < argc; ++i) bench(argv[i], corpora);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
