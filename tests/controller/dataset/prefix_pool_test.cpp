// dataset.prefixes: every conversation's system prompt ends with K prefixes from a pool of N,
// the same text for the same pool index, drawn from (seed, conversation) only.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/synthetic.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

// The newline-ended lines of a system prompt.
std::vector<std::string> prompt_lines(const std::string& prompt) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = prompt.find('\n'); end != std::string::npos; end = prompt.find('\n', start)) {
    lines.push_back(prompt.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

TEST_CASE(
    "dataset.prefixes: K of a pool of N in every system prompt, shared across conversations") {
  Config config;
  config.seed = 3;
  config.dataset.conversations = 200;
  config.dataset.shared_prefix_tokens = 16;
  config.dataset.prefixes = PrefixesConfig{4, 32, 2};
  const std::string shared = synthetic_system_prompt(config);
  std::set<std::string> pool;
  std::set<std::string> firsts;
  for (uint64_t i = 0; i < 200; ++i) {
    const auto c = make_synthetic_conversation(config, i);
    CHECK(testing::packed(c) == testing::packed(make_synthetic_conversation(config, i)));
    REQUIRE(c.system_prompt.starts_with(shared + "\n"));
    const auto lines = prompt_lines(c.system_prompt.substr(shared.size() + 1));
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] != lines[1]);  // drawn without repeats
    for (const auto& line : lines) {
      CHECK(line.size() == bytes_for_tokens(32));
      pool.insert(line);
    }
    firsts.insert(lines[0]);
  }
  CHECK(pool.size() == 4);    // the whole pool is used, and nothing else
  CHECK(firsts.size() == 4);  // every prefix leads some conversations: a cacheable prefix
  Config other = config;
  other.seed = 4;
  CHECK(make_synthetic_conversation(other, 0).system_prompt !=
        make_synthetic_conversation(config, 0).system_prompt);
}

TEST_CASE("dataset.prefixes counts toward the system prompt's wire bound") {
  Config config;
  config.source_path = "run.yaml";
  config.dataset.prefixes = PrefixesConfig{8, 3'000'000, 2};
  const std::string error =
      test::error_message<ConfigError>([&] { open_synthetic_dataset(config); });
  CHECK(error.starts_with("run.yaml: dataset.prefixes: the system prompt with its pool prefixes"));
  config.dataset.prefixes->tokens = 64;
  CHECK(test::error_message<ConfigError>([&] { open_synthetic_dataset(config); }) == "");
}

}  // namespace convoy::controller
