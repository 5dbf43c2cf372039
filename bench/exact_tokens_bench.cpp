// dataset.tokenizer at scale what exact tokens cost the controller and the
// workers. Usage: exact_tokens_bench TOKENIZER_JSON_OR_FOLDER [CONVERSATIONS]
//
// Prints one line per figure: the tokenizer's load and the corpus's word table (once per run),
// the time to build a 100,000-token prompt (target < 5 ms), ten million synthetic conversations
// opened with the tokenizer (time to the first, RSS before and after generating 100,000 of
// them: flat memory), and a worker's cost to count a reply's output tokens from its text.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/token_plan.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// CPU seconds of this thread: the figures to read on a loaded machine (wall time includes the
// time other processes held the core).
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double rss_mb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1000.0;
  }
  return -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: exact_tokens_bench TOKENIZER [CONVERSATIONS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const uint64_t conversations = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10'000'000;
  try {
    auto t = Clock::now();
    const auto tokenizer = convoy::tokenizer::Tokenizer::load(path);
    std::printf("tokenizer_load_s: %.3f\n", seconds_since(t));

    convoy::Config config;
    config.dataset.tokenizer = path;
    config.dataset.conversations = static_cast<int64_t>(conversations);
    t = Clock::now();
    const auto plan = convoy::controller::local_token_plan(config);
    std::printf("plan_s (load again + count the corpus's words): %.3f\n", seconds_since(t));

    // A 100,000-token prompt, 50 times at different positions.
    std::vector<double> build_ms;
    std::vector<double> build_cpu_ms;
    size_t bytes = 0;
    for (uint64_t i = 0; i < 50; ++i) {
      std::string prompt;
      const auto b = Clock::now();
      const double cpu = thread_cpu_s();
      plan->text->append(prompt, i * 7919, 100'000, false);
      build_cpu_ms.push_back((thread_cpu_s() - cpu) * 1e3);
      build_ms.push_back(seconds_since(b) * 1e3);
      bytes = prompt.size();
    }
    std::string check;
    plan->text->append(check, 0, 100'000, false);
    std::printf(
        "prompt_100k_build_ms: wall median %.3f max %.3f, cpu median %.3f max %.3f (%zu bytes; "
        "encoded: %zu tokens)\n",
        median(build_ms), *std::max_element(build_ms.begin(), build_ms.end()), median(build_cpu_ms),
        *std::max_element(build_cpu_ms.begin(), build_cpu_ms.end()), bytes,
        tokenizer->count(check));

    const double rss_before = rss_mb();
    t = Clock::now();
    const auto dataset = convoy::controller::open_dataset(config, plan);
    const auto first = dataset->conversation(0);
    std::printf("synthetic %llu conversations: open + first %.4f s, rss %.1f MB\n",
                static_cast<unsigned long long>(dataset->size()), seconds_since(t), rss_before);
    t = Clock::now();
    const uint64_t sample = 100'000;
    uint64_t turns = 0;
    for (uint64_t i = 0; i < sample; ++i) {
      turns += dataset->conversation((i * 99991) % dataset->size()).turns.size();
    }
    const double s = seconds_since(t);
    std::printf("generated %llu conversations (%llu turns): %.0f per s, rss after %.1f MB\n",
                static_cast<unsigned long long>(sample), static_cast<unsigned long long>(turns),
                static_cast<double>(sample) / s, rss_mb());

    // A worker's OSL count per reply without usage: 12, 64 and 512 tokens of prose.
    for (const int64_t osl : {12, 64, 512}) {
      std::string reply;
      plan->text->append(reply, 4242, osl, false);
      const int reps = 20000;
      size_t sink = 0;
      const auto c = Clock::now();
      const double cpu = thread_cpu_s();
      for (int r = 0; r < reps; ++r) sink += tokenizer->count(reply);
      std::printf("osl_count_us (%lld tokens, %zu bytes): wall %.2f cpu %.2f (sink %zu)\n",
                  static_cast<long long>(osl), reply.size(), seconds_since(c) * 1e6 / reps,
                  (thread_cpu_s() - cpu) * 1e6 / reps, sink % 7);
    }
    return first.turns.empty() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exact_tokens_bench: %s\n", e.what());
    return 1;
  }
}
