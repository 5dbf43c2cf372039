// The controller's dataset layer at scale: how long until the first conversation can be
// scheduled, and what the controller holds for the dataset, for a synthetic dataset generated on
// demand and for a JSONL file validated in one streaming pass and read back by offset.
//
// Usage: dataset_bench synthetic [N]        # default 10,000,000 conversations, on demand
//        dataset_bench synthetic-eager [N]  # the old way: build all N up front (default 1e6)
//        dataset_bench jsonl [N] [PATH]     # writes N rows (default 1,000,000) to PATH
//                                           # (default /tmp/convoy-dataset-bench.jsonl), then opens
//
// Prints one line per figure: time to first conversation, RSS after opening (and the peak),
// bytes held per conversation, and conversations generated (or read back) per second.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/synthetic.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using convoy::Config;
using convoy::DatasetType;

// VmRSS / VmHWM of this process, in bytes.
long status_bytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0)
      return std::strtol(line.c_str() + prefix.size(), nullptr, 10) * 1024;
  }
  return -1;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double mb(long bytes) { return static_cast<double>(bytes) / 1e6; }

// Reads (or generates) `count` conversations spread over the dataset: the per-conversation cost.
void sample_rate(const convoy::controller::Dataset& dataset, uint64_t count) {
  const auto t = Clock::now();
  uint64_t bytes = 0;
  const uint64_t step = dataset.size() / count == 0 ? 1 : dataset.size() / count;
  for (uint64_t i = 0; i < count; ++i) {
    const auto c = dataset.conversation((i * step) % dataset.size());
    bytes += c.turns.size();
  }
  const double s = seconds_since(t);
  std::printf("conversations_per_s: %.0f   (%llu sampled, %llu turns)\n",
              static_cast<double>(count) / s, static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(bytes));
}

void report_open(const char* what, uint64_t size, double open_s, double first_s, long base_rss) {
  const long rss = status_bytes("VmRSS");
  const long peak = status_bytes("VmHWM");
  std::printf("%s: %llu conversations\n", what, static_cast<unsigned long long>(size));
  std::printf("open_s: %.3f   time_to_first_conversation_s: %.3f\n", open_s, first_s);
  std::printf("rss_mb: %.1f   peak_rss_mb: %.1f   baseline_rss_mb: %.1f\n", mb(rss), mb(peak),
              mb(base_rss));
  std::printf("bytes_held_per_conversation: %.2f\n",
              static_cast<double>(rss - base_rss) / static_cast<double>(size));
}

Config synthetic_config(uint64_t n) {
  Config config;  // the defaults: 4 +- 1 turns of 256 +- 32 tokens
  config.dataset.conversations = static_cast<int64_t>(n);
  return config;
}

int run_synthetic(uint64_t n) {
  const long base = status_bytes("VmRSS");
  const auto t = Clock::now();
  const auto dataset = convoy::controller::open_dataset(synthetic_config(n));
  const double open_s = seconds_since(t);
  const auto first = dataset->conversation(0);
  const double first_s = seconds_since(t);
  report_open("synthetic (on demand)", dataset->size(), open_s, first_s, base);
  sample_rate(*dataset, 20000);
  return first.turns.empty() ? 1 : 0;
}

int run_synthetic_eager(uint64_t n) {
  const long base = status_bytes("VmRSS");
  const auto t = Clock::now();
  const auto all = convoy::controller::make_synthetic_dataset(synthetic_config(n));
  const double s = seconds_since(t);
  report_open("synthetic (built up front, as before)", all.size(), s, s, base);
  return all.empty() ? 1 : 0;
}

int run_jsonl(uint64_t n, const std::string& path) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::string text(200, 'x');  // 50 tokens per turn, two turns per row
    for (uint64_t i = 0; i < n; ++i) {
      out << "{\"conversation_id\": \"c" << i << "\", \"turns\": [{\"text\": \"" << text
          << "\"}, {\"text\": \"" << text << "\", \"max_tokens\": 64}]}\n";
    }
  }
  std::ifstream size_of(path, std::ios::binary | std::ios::ate);
  const auto file_bytes = static_cast<double>(size_of.tellg());
  Config config;
  config.dataset.type = DatasetType::kJsonl;
  config.dataset.path = path;
  const long base = status_bytes("VmRSS");
  const auto t = Clock::now();
  const auto dataset = convoy::controller::open_dataset(config);
  const double open_s = seconds_since(t);
  const auto first = dataset->conversation(0);
  const double first_s = seconds_since(t);
  std::printf("file: %s, %.0f MB\n", path.c_str(), file_bytes / 1e6);
  report_open("jsonl (validated, indexed by offset)", dataset->size(), open_s, first_s, base);
  std::printf("validate_mb_per_s: %.0f\n", file_bytes / 1e6 / open_s);
  sample_rate(*dataset, 20000);
  return first.turns.empty() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "synthetic";
  const auto count = [&](uint64_t fallback) {
    return argc > 2 ? std::strtoull(argv[2], nullptr, 10) : fallback;
  };
  try {
    if (mode == "synthetic") return run_synthetic(count(10'000'000));
    if (mode == "synthetic-eager") return run_synthetic_eager(count(1'000'000));
    if (mode == "jsonl") {
      return run_jsonl(count(1'000'000), argc > 3 ? argv[3] : "/tmp/convoy-dataset-bench.jsonl");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dataset_bench: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "usage: dataset_bench synthetic|synthetic-eager|jsonl [N] [PATH]\n");
  return 2;
}
