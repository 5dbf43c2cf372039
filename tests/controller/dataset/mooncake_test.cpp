#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "controller/dataset/corpus.hpp"
#include "controller/dataset/mooncake.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

std::vector<proto::Conversation> parse_mooncake(const std::string& text, Config config = {}) {
  std::istringstream in(text);
  return parse_mooncake_trace(in, "trace.jsonl", config);
}

std::string mooncake_error_of(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] { parse_mooncake(text, config); });
}

constexpr size_t kBlockBytes = kMooncakeBlockTokens * kBytesPerToken;

Config trace_config() {
  Config config;
  config.load.mode = LoadMode::kTrace;
  return config;
}

}  // namespace

TEST_CASE("mooncake hash ids become shared text blocks") {
  const auto all = parse_mooncake(
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
    const auto again = parse_mooncake(
        "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 52, \"hash_ids\": [46, 47, "
        "9]}\n");
    CHECK(testing::packed(again[0]) == testing::packed(all[0]));
    CHECK(mooncake_block_text(7, 47, Corpus::embedded()) !=
          mooncake_block_text(42, 47, Corpus::embedded()));
  }
}

TEST_CASE("mooncake tokens beyond the blocks and rows without ids get seeded text") {
  const auto all = parse_mooncake(
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
  const auto all = parse_mooncake(
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
    const auto all = parse_mooncake(trace, trace_config());
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
    const auto all = parse_mooncake(trace, config);
    CHECK(all.size() == 2);
  }
  SUBCASE("other modes leave start_ns 0") {
    for (const auto& c : parse_mooncake(trace)) CHECK(c.start_ns == 0);
  }
  SUBCASE("trace mode needs a timestamp on each conversation's first row") {
    CHECK(mooncake_error_of("{\"timestamp\": 0, \"input_length\": 10}\n{\"input_length\": 10}\n",
                            trace_config()) ==
          "trace.jsonl:2: timestamp: required on a conversation's first row with load.mode trace");
  }
}

TEST_CASE("mooncake errors name the file, the line and what is wrong") {
  CHECK(mooncake_error_of("{\"input_length\": 10}\n{\"input_length\": 10,}\n") ==
        "trace.jsonl:2: invalid JSON at column 21: Missing a name for object member.");
  CHECK(mooncake_error_of("{\"output_length\": 10}\n") ==
        "trace.jsonl:1: input_length: exactly one of \"input_length\", \"text_input\" or "
        "\"messages\" is required");
  CHECK(mooncake_error_of("{\"input_length\": 10, \"text_input\": \"a\"}\n") ==
        "trace.jsonl:1: input_length: exactly one of \"input_length\", \"text_input\" or "
        "\"messages\" is required");
  CHECK(mooncake_error_of("{\"input_length\": 512, \"hash_ids\": [1, 2]}\n") ==
        "trace.jsonl:1: input_length: 512 leaves the last of 2 hash_ids empty (blocks of 512 "
        "tokens)");
  CHECK(mooncake_error_of("{\"input_length\": 10, \"hash_ids\": [1, -2]}\n") ==
        "trace.jsonl:1: hash_ids[1]: expected a non-negative integer, got a number");
  CHECK(mooncake_error_of("{\"text_input\": \"a\", \"hash_ids\": [1]}\n") ==
        "trace.jsonl:1: hash_ids: only allowed with \"input_length\"");
  CHECK(mooncake_error_of("{\"input_length\": 0}\n") ==
        "trace.jsonl:1: input_length: must be >= 1, got 0");
  CHECK(mooncake_error_of("{\"input_length\": 5, \"hashids\": [1]}\n") ==
        "trace.jsonl:1: hashids: unknown key (expected one of: timestamp, input_length, "
        "text_input, messages, output_length, hash_ids, session_id, delay, extra, "
        "parent_session_id, spawn_after_turn)");
  CHECK(mooncake_error_of("{\"messages\": [{\"role\": \"narrator\", \"content\": \"x\"}]}\n") ==
        "trace.jsonl:1: messages[0].role: \"narrator\" is not one of system, user, assistant, "
        "tool");
  CHECK(mooncake_error_of("") == "trace.jsonl: the trace has no rows");
}

}  // namespace convoy::controller

namespace convoy::controller {

namespace {

// Validates without building any text (a 16 MiB prompt is not generated to check its bounds).
std::string index_error_of(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] {
    std::istringstream in(text);
    index_mooncake_trace(in, "trace.jsonl", row_text(text), config);
  });
}

}  // namespace

TEST_CASE("mooncake input_length is bounded by what crosses the wire") {
  CHECK(mooncake_error_of("{\"input_length\": 10}\n{\"input_length\": 1e12}\n") ==
        "trace.jsonl:2: input_length: must be <= 4194304, got 1000000000000 (a prompt crosses the "
        "wire "
        "as one string of at most 16777216 bytes (16 MiB))");
  CHECK(index_error_of("{\"input_length\": 4194305}\n")
            .starts_with("trace.jsonl:1: input_length: must be <= 4194304, got 4194305"));
  CHECK(index_error_of("{\"input_length\": 4194304}\n") == "");
  SUBCASE("a session heavier than one wire message") {
    std::string rows;
    for (int k = 0; k < 5; ++k) rows += "{\"session_id\": \"s\", \"input_length\": 4000000}\n";
    CHECK(index_error_of(rows).starts_with(
        "trace.jsonl:5: session_id: the conversation reaches 800"));
    CHECK(index_error_of(rows.substr(0, rows.size() / 5 * 4)) == "");
  }
  SUBCASE("history recorded: the reply of output_length tokens must fit too") {
    Config config;
    config.dataset.history = HistoryMode::kRecorded;
    CHECK(index_error_of("{\"input_length\": 4, \"output_length\": 5000000}\n", config)
              .starts_with("trace.jsonl:1: output_length: with history: recorded the generated "
                           "reply of 20000000 bytes"));
  }
}

TEST_CASE("mooncake timestamps are finite, bounded and fit int64 nanoseconds") {
  CHECK(mooncake_error_of("{\"timestamp\": 0, \"input_length\": 4}\n{\"timestamp\": 1e300, "
                          "\"input_length\": 4}\n",
                          trace_config()) ==
        "trace.jsonl:2: timestamp: must be <= 1e+15, got 1e+300 (a finite number of "
        "milliseconds; Unix-epoch ms fit)");
  CHECK(mooncake_error_of("{\"timestamp\": 1e300, \"input_length\": 4}\n")
            .starts_with("trace.jsonl:1: timestamp: must be <= 1e+15"));  // in every mode
  CHECK(mooncake_error_of("{\"timestamp\": 5, \"input_length\": 4}\n{\"timestamp\": 2e12, "
                          "\"input_length\": 4}\n",
                          trace_config()) ==
        "trace.jsonl:2: timestamp: 2e+12 is 2e+12 ms after the earliest first-row timestamp "
        "(line 1); a trace may span at most 1e+12 ms (about 31.7 years)");
  CHECK(mooncake_error_of("{\"input_length\": 4, \"delay\": 1e300}\n")
            .starts_with("trace.jsonl:1: delay: must be <= 1e+09, got 1e+300"));
  SUBCASE("Unix-epoch milliseconds replay relative to the earliest") {
    const auto all = parse_mooncake(
        "{\"timestamp\": 1764590000000, \"input_length\": 4}\n"
        "{\"timestamp\": 1764590000250.5, \"input_length\": 4}\n",
        trace_config());
    REQUIRE(all.size() == 2);
    CHECK(all[1].start_ns == 250'500'000);
  }
}

TEST_CASE("mooncake rows with invalid UTF-8 or repeated keys are rejected") {
  CHECK(mooncake_error_of("{\"text_input\": \"\xFFx\"}\n") ==
        "trace.jsonl:1: text_input: invalid UTF-8 at byte 0 of the string");
  CHECK(mooncake_error_of("{\"input_length\": 4, \"input_length\": 5}\n") ==
        "trace.jsonl:1: input_length: duplicate key");
}

TEST_CASE("mooncake sessions are read back from their rows by offset") {
  const std::string text =
      "{\"timestamp\": 10, \"session_id\": \"a\", \"text_input\": \"a0\"}\n"
      "{\"timestamp\": 30, \"session_id\": \"b\", \"text_input\": \"b0\"}\n"
      "{\"timestamp\": 99, \"session_id\": \"a\", \"text_input\": \"a1\", \"delay\": 7}\n";
  std::istringstream in(text);
  const auto dataset = index_mooncake_trace(in, "trace.jsonl", row_text(text), trace_config());
  REQUIRE(dataset->size() == 2);
  CHECK(dataset->start_ns(1) == 20'000'000);
  const auto a = dataset->conversation(0);
  CHECK(a.conversation_id == "a");
  REQUIRE(a.turns.size() == 2);
  CHECK(a.turns[1].user_text == "a1");
  CHECK(a.turns[1].delay_ms == 7);
  CHECK(testing::packed(dataset->conversation(1)) ==
        testing::packed(parse_mooncake(text, trace_config())[1]));
}

}  // namespace convoy::controller
