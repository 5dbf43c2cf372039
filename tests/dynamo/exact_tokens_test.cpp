// Exact tokens against the real Dynamo 1.6.1 frontend with Qwen3's tokenizer:
// the frontend's usage.prompt_tokens for a synthetic first turn of N tokens is N plus the chat
// template overhead convoy learns, exactly; with count_chat_template, exactly N (and later
// turns add exactly their N and the recorded reply). tokenizer: server fails cleanly: Dynamo's
// frontend has no /tokenize.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "common/exit_codes.hpp"
#include "controller/tokenizer_files.hpp"
#include "dynamo/dynamo_stack.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

struct RunResult {
  int rc = -1;
  std::string output;
  std::vector<rapidjson::Document> records;
};

RunResult run_convoy(const DynamoStack& stack, const fs::path& dir, const std::string& name,
                     const std::string& dataset) {
  const fs::path config = dir / (name + ".yaml");
  std::ofstream(config) << "name: " << name << "\ntarget:\n  url: " << stack.url()
                        << "\n  model: Qwen/Qwen3-0.6B\n  streaming: true\n"
                        << "dataset:\n  type: synthetic\n  output_tokens: {mean: 4, stddev: 0}\n"
                        << dataset << "load: {mode: concurrency, concurrency: 2}\n"
                        << "workers: {local: 1}\n";
  const fs::path out = dir / name;
  Subprocess p({bin("controller/convoy"), "run", config.string(), "-o", out.string()});
  const auto rc = p.wait(240);
  RunResult r;
  r.rc = rc.value_or(-1);
  r.output = p.output();
  if (fs::exists(out / "records.jsonl")) r.records = read_jsonl(out / "records.jsonl");
  return r;
}

}  // namespace

TEST_CASE("exact tokens: Dynamo 1.6.1's prompt_tokens are N + the overhead, N with the template") {
  DynamoStack stack({.workers = 1, .speedup_ratio = 50});
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path dir = fresh_dir("dynamo-exact-tokens");
  const std::string qwen = tokenizer_folder("qwen3");
  for (const int n : {16, 128, 1000, 8000}) {
    const std::string draws =
        "  conversations: 3\n  turns: {mean: 1, stddev: 0}\n"
        "  input_tokens: {mean: " +
        std::to_string(n) +
        ", stddev: 0}\n"
        "  tokenizer: " +
        qwen + "\n";
    // With count_chat_template: the overhead is learned (and logged), prompt_tokens == N.
    const RunResult exact = run_convoy(stack, dir, "n" + std::to_string(n) + "-template",
                                       draws + "  count_chat_template: true\n");
    INFO("N " << n << "\n" << exact.output);
    REQUIRE(exact.rc == 0);
    std::smatch m;
    REQUIRE(std::regex_search(
        exact.output, m, std::regex("the chat template adds ([0-9]+) tokens to a first turn")));
    const int overhead = std::stoi(m[1]);
    CHECK(overhead > 0);
    REQUIRE(exact.records.size() == 3);
    for (const auto& r : exact.records) CHECK(r["metrics"]["isl"].GetInt64() == n);
    // Without it: the user message holds N, the frontend counts N + the overhead.
    const RunResult plain = run_convoy(stack, dir, "n" + std::to_string(n), draws);
    INFO(plain.output);
    REQUIRE(plain.rc == 0);
    REQUIRE(plain.records.size() == 3);
    for (const auto& r : plain.records) CHECK(r["metrics"]["isl"].GetInt64() == n + overhead);
  }
  fs::remove_all(dir);
}

TEST_CASE("exact tokens: later turns and a shared prefix add exactly what was drawn (Dynamo)") {
  DynamoStack stack({.workers = 1, .speedup_ratio = 50});
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path dir = fresh_dir("dynamo-exact-turns");
  const RunResult r = run_convoy(
      stack, dir, "turns",
      "  conversations: 2\n  turns: {mean: 3, stddev: 0}\n  input_tokens: {mean: 128, stddev: 0}\n"
      "  shared_prefix_tokens: 100\n  history: recorded\n  count_chat_template: true\n"
      "  tokenizer: " +
          tokenizer_folder("qwen3") + "\n");
  INFO(r.output);
  REQUIRE(r.rc == 0);
  REQUIRE(r.records.size() == 6);
  for (const auto& rec : r.records) {
    const int64_t k = rec["turn_index"].GetInt64();
    // The prefix, k + 1 user turns of 128 and k recorded replies of max_tokens (4) each.
    CHECK(rec["metrics"]["isl"].GetInt64() == 100 + 128 * (k + 1) + 4 * k);
  }
  fs::remove_all(dir);
}

TEST_CASE("exact tokens: tokenizer: server against Dynamo exits 2 naming /tokenize, nothing sent") {
  DynamoStack stack({.workers = 1, .speedup_ratio = 50});
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path dir = fresh_dir("dynamo-exact-server");
  const RunResult r = run_convoy(stack, dir, "server", "  conversations: 2\n  tokenizer: server\n");
  INFO(r.output);
  CHECK(r.rc == convoy::kExitBadInput);
  CHECK(r.output.find("/tokenize: 404") != std::string::npos);
  CHECK(!fs::exists(dir / "server"));
  fs::remove_all(dir);
}
