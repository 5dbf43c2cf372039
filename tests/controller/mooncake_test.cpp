#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "controller/corpus.hpp"
#include "controller/dataset_test_util.hpp"
#include "controller/mooncake.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

std::vector<proto::Conversation> parse(const std::string& text, Config config = {}) {
  std::istringstream in(text);
  return parse_mooncake_trace(in, "trace.jsonl", config);
}

std::string error_of(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] { parse(text, config); });
}

constexpr size_t kBlockBytes = kMooncakeBlockTokens * kBytesPerToken;

Config trace_config() {
  Config config;
  config.load.mode = LoadMode::kTrace;
  return config;
}

}  // namespace

TEST_CASE("mooncake hash ids become shared text blocks") {
  const auto all = parse(
      "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 52, \"hash_ids\": [46, 47, "
      "9]}\n"
      "{\"timestamp\": 10, \"input_length\": 1030, \"output_length\": 26, \"hash_ids\": [46, 47, "
      "8]}\n"
      "{\"timestamp\": 20, \"input_length\": 700, \"output_length\": 26, \"hash_ids\": [5, 47]}\n");
  REQUIRE(all.size() == 3);
  const std::string& a = all[0].turns[0].user_text;
  const std::string& b = all[1].turns[0].user_text;
  const std::string& c = all[2].turns[0].user_text;
  SUBCASE("the text has exactly input_length tokens under the estimate") {
    CHECK(a.size() == 1100 * kBytesPerToken);
    CHECK(b.size() == 1030 * kBytesPerToken);
    CHECK(all[0].turns[0].input_tokens_est == 1100);
    CHECK(all[0].turns[0].max_tokens == 52);
  }
  SUBCASE("equal leading ids give equal prefixes, and the prefix ends where the ids differ") {
    CHECK(a.compare(0, 2 * kBlockBytes, b, 0, 2 * kBlockBytes) == 0);
    CHECK(a.substr(2 * kBlockBytes, 16) != b.substr(2 * kBlockBytes, 16));
  }
  SUBCASE("an id gives the same block anywhere, different ids differ") {
    const std::string block47 = mooncake_block_text(Config{}.seed, 47, Corpus::embedded());
    CHECK(block47.size() == kBlockBytes);
    CHECK(a.substr(kBlockBytes, kBlockBytes) == block47);
    CHECK(c.substr(kBlockBytes, 700 * kBytesPerToken - kBlockBytes) ==
          block47.substr(0, 700 * kBytesPerToken - kBlockBytes));
    CHECK(c.substr(0, kBlockBytes) != a.substr(0, kBlockBytes));
  }
  SUBCASE("the same seed gives the same text; another seed other text") {
    const auto again = parse(
        "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 52, \"hash_ids\": [46, 47, "
        "9]}\n");
    CHECK(testing::packed(again[0]) == testing::packed(all[0]));
    CHECK(mooncake_block_text(7, 47, Corpus::embedded()) !=
          mooncake_block_text(42, 47, Corpus::embedded()));
  }
}

TEST_CASE("mooncake tokens beyond the blocks and rows without ids get seeded text") {
  const auto all = parse(
      "{\"input_length\": 600, \"hash_ids\": [1]}\n"
      "{\"input_length\": 40}\n"
      "{\"input_length\": 40}\n");
  CHECK(all[0].turns[0].user_text.size() == 600 * kBytesPerToken);
  CHECK(all[0].turns[0].user_text.substr(0, kBlockBytes) ==
        mooncake_block_text(Config{}.seed, 1, Corpus::embedded()));
  CHECK(all[1].turns[0].user_text.size() == 160);
  CHECK(all[1].turns[0].user_text != all[2].turns[0].user_text);
  CHECK(all[1].turns[0].max_tokens >= 1);  // no output_length: dataset.output_tokens
}

TEST_CASE("mooncake sessions form multi-turn conversations in file order") {
  const auto all = parse(
      "{\"session_id\": \"abc\", \"input_length\": 300, \"output_length\": 40}\n"
      "{\"input_length\": 10, \"output_length\": 4}\n"
      "{\"session_id\": \"abc\", \"delay\": 2000, \"input_length\": 150, \"output_length\": 20}\n"
      "{\"session_id\": \"xyz\", \"text_input\": \"What is the capital of France?\"}\n");
  REQUIRE(all.size() == 3);
  CHECK(all[0].conversation_id == "abc");
  REQUIRE(all[0].turns.size() == 2);
  CHECK(all[0].turns[0].delay_ms == 0);
  CHECK(all[0].turns[1].delay_ms == 2000);
  CHECK(all[0].turns[1].max_tokens == 20);
  CHECK(all[0].turns[1].user_text.size() == 600);
  CHECK(all[1].conversation_id == "conv-1");
  CHECK(all[2].conversation_id == "xyz");
  CHECK(all[2].turns[0].user_text == "What is the capital of France?");
  for (const auto& c : all) CHECK(c.start_ns == 0);  // load.mode concurrency
}

TEST_CASE("mooncake timestamps drive start_ns in load.mode trace") {
  const std::string trace =
      "{\"timestamp\": 1000, \"input_length\": 10}\n"
      "{\"timestamp\": 1500.5, \"input_length\": 10, \"session_id\": \"s\"}\n"
      "{\"timestamp\": 99999, \"input_length\": 10, \"session_id\": \"s\", \"delay\": 5}\n"
      "{\"timestamp\": 4000, \"input_length\": 10}\n";
  SUBCASE("relative to the first timestamp, in ns") {
    const auto all = parse(trace, trace_config());
    REQUIRE(all.size() == 3);
    CHECK(all[0].start_ns == 0);
    CHECK(all[1].start_ns == 500'500'000);
    CHECK(all[1].turns.size() == 2);  // a later row's timestamp does not start a conversation
    CHECK(all[2].start_ns == 3'000'000'000);
  }
  SUBCASE("dataset.conversations keeps the first N") {
    Config config = trace_config();
    config.dataset.conversations = 2;
    config.dataset.conversations_set = true;
    const auto all = parse(trace, config);
    CHECK(all.size() == 2);
  }
  SUBCASE("other modes leave start_ns 0") {
    for (const auto& c : parse(trace)) CHECK(c.start_ns == 0);
  }
  SUBCASE("trace mode needs a timestamp on each conversation's first row") {
    CHECK(error_of("{\"timestamp\": 0, \"input_length\": 10}\n{\"input_length\": 10}\n",
                   trace_config()) ==
          "trace.jsonl:2: timestamp: required on a conversation's first row with load.mode trace");
  }
}

TEST_CASE("mooncake errors name the file, the line and what is wrong") {
  CHECK(error_of("{\"input_length\": 10}\n{\"input_length\": 10,}\n") ==
        "trace.jsonl:2: invalid JSON at column 21: Missing a name for object member.");
  CHECK(error_of("{\"output_length\": 10}\n") ==
        "trace.jsonl:1: input_length: exactly one of \"input_length\", \"text_input\" or "
        "\"messages\" is required");
  CHECK(error_of("{\"input_length\": 10, \"text_input\": \"a\"}\n") ==
        "trace.jsonl:1: input_length: exactly one of \"input_length\", \"text_input\" or "
        "\"messages\" is required");
  CHECK(error_of("{\"input_length\": 512, \"hash_ids\": [1, 2]}\n") ==
        "trace.jsonl:1: input_length: 512 leaves the last of 2 hash_ids empty (blocks of 512 "
        "tokens)");
  CHECK(error_of("{\"input_length\": 10, \"hash_ids\": [1, -2]}\n") ==
        "trace.jsonl:1: hash_ids[1]: expected a non-negative integer, got a number");
  CHECK(error_of("{\"text_input\": \"a\", \"hash_ids\": [1]}\n") ==
        "trace.jsonl:1: hash_ids: only allowed with \"input_length\"");
  CHECK(error_of("{\"input_length\": 0}\n") == "trace.jsonl:1: input_length: must be >= 1, got 0");
  CHECK(error_of("{\"input_length\": 5, \"hashids\": [1]}\n") ==
        "trace.jsonl:1: hashids: unknown key (expected one of: timestamp, input_length, "
        "text_input, messages, output_length, hash_ids, session_id, delay, extra)");
  CHECK(error_of("{\"messages\": [{\"role\": \"narrator\", \"content\": \"x\"}]}\n") ==
        "trace.jsonl:1: messages[0].role: \"narrator\" is not one of system, user, assistant, "
        "tool");
  CHECK(error_of("") == "trace.jsonl: the trace has no rows");
}

}  // namespace convoy::controller
