// The tokenizer's speed on one core (issue 31 item 4): load time of each tokenizer.json, and
// encode throughput over the tests' multilingual corpus, first pass (word cache cold) and
// second pass (warm). Usage: tokenizer_bench DIR... (each a folder holding tokenizer.json, e.g.
// `scripts/tokenizers qwen3`); prints one line per tokenizer. Figures: docs/benchmarks.md.
#include <sys/resource.h>

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

long max_rss_mib() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

void bench(const std::string& dir, const std::vector<std::string>& docs, std::size_t bytes) {
  double best_load_s = 1e9;
  std::unique_ptr<convoy::tokenizer::Tokenizer> tok;
  for (int k = 0; k < 3; ++k) {
    tok.reset();
    const auto t0 = Clock::now();
    tok = convoy::tokenizer::Tokenizer::load(dir);
    best_load_s = std::min(best_load_s, seconds_since(t0));
  }
  double pass_mb_per_s[2] = {};
  std::size_t tokens = 0;
  for (double& rate : pass_mb_per_s) {
    tokens = 0;
    const auto t0 = Clock::now();
    for (const std::string& d : docs) tokens += tok->count(d);
    rate = static_cast<double>(bytes) / 1e6 / seconds_since(t0);
  }
  std::printf(
      "%-60s load %.3f s  encode %.1f MB/s cold, %.1f MB/s warm  (%zu tokens, %.2f "
      "bytes/token, vocab %zu, max RSS %ld MiB)\n",
      dir.c_str(), best_load_s, pass_mb_per_s[0], pass_mb_per_s[1], tokens,
      static_cast<double>(bytes) / static_cast<double>(tokens), tok->vocab_size(), max_rss_mib());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tokenizer_bench DIR...  (DIR: a folder with tokenizer.json)\n");
    return 2;
  }
  // The corpus without specials (they vary by tokenizer): 8 MB, so one pass takes ~0.5 s.
  const auto docs = convoy::test::build_corpus({}, 8U << 20);
  std::size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  try {
    for (int i = 1; i < argc; ++i) bench(argv[i], docs, bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
