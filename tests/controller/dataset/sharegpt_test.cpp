// dataset.type sharegpt. Every fixture is written here from the documented shape (a JSON array of
// {"id", "conversations": [{"from", "value"}]}), never copied from a published dataset.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "controller/dataset/corpus.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/sharegpt.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

std::vector<proto::Conversation> parse_sharegpt(const std::string& text, Config config = {},
                                                FileDatasetOptions options = {}) {
  std::istringstream in(text);
  return parse_sharegpt_dataset(in, "chat.json", config, options);
}

std::string sharegpt_error_of(const std::string& text, Config config = {}) {
  return test::error_message<ConfigError>([&] { parse_sharegpt(text, config); });
}

// Counts words: a tokenizer whose counts differ from the 4-bytes estimate.
class ShareGptWordCounter final : public TokenCounter {
 public:
  int64_t count(std::string_view text) const override {
    int64_t words = 0;
    bool in_word = false;
    for (const char c : text) {
      const bool space = c == ' ';
      words += !space && !in_word ? 1 : 0;
      in_word = !space;
    }
    return words;
  }
  std::string source() const override { return "words"; }
};

const char* const kTwoTurns = R"([
  {"id": "chat-1", "conversations": [
    {"from": "system", "value": "You answer in one line."},
    {"from": "human", "value": "Name a prime number."},
    {"from": "gpt", "value": "Seven is a prime number."},
    {"from": "human", "value": "And an even one?"},
    {"from": "gpt", "value": "Two is the only even prime."}]},
  {"conversations": [{"from": "human", "value": "Hello"}, {"from": "gpt", "value": "Hi!"}]}
])";

}  // namespace

TEST_CASE("sharegpt: human and gpt pairs become the turns of one conversation") {
  const auto all = parse_sharegpt(kTwoTurns);
  REQUIRE(all.size() == 2);
  const auto& first = all[0];
  CHECK(first.conversation_id == "chat-1");
  CHECK(first.system_prompt == "You answer in one line.");
  REQUIRE(first.turns.size() == 2);
  CHECK(first.turns[0].user_text == "Name a prime number.");
  CHECK(first.turns[1].user_text == "And an even one?");
  SUBCASE("max_tokens is the recorded reply's length by the estimate") {
    CHECK(first.turns[0].max_tokens == estimate_tokens("Seven is a prime number."));
    CHECK(first.turns[1].max_tokens == estimate_tokens("Two is the only even prime."));
    CHECK(first.turns[0].input_tokens_est == estimate_tokens("Name a prime number."));
  }
  SUBCASE("an element without id gets the default id, and turn 0 no delay") {
    CHECK(all[1].conversation_id == "conv-1");
    CHECK(all[1].turns[0].delay_ms == 0);
    CHECK(all[1].turns[0].max_tokens == 1);  // "Hi!": 3 bytes, one token
  }
  SUBCASE("the reply is the recorded history only with history: recorded") {
    CHECK(first.turns[0].recorded_reply.empty());
    Config recorded;
    recorded.dataset.history = HistoryMode::kRecorded;
    const auto again = parse_sharegpt(kTwoTurns, recorded);
    CHECK(again[0].turns[0].recorded_reply == "Seven is a prime number.");
  }
  SUBCASE("a tokenizer counts the reply") {
    FileDatasetOptions options;
    options.counter = std::make_shared<ShareGptWordCounter>();
    const auto counted = parse_sharegpt(kTwoTurns, Config{}, options);
    CHECK(counted[0].turns[0].max_tokens == 5);
    CHECK(counted[0].turns[1].max_tokens == 6);
  }
  SUBCASE("dataset.output_tokens, when set, is drawn instead") {
    Config fixed;
    fixed.dataset.output_tokens = Distribution{300, 0, 1, std::nullopt};
    fixed.dataset.output_tokens_set = true;
    const auto drawn = parse_sharegpt(kTwoTurns, fixed);
    CHECK(drawn[0].turns[0].max_tokens == 300);
    CHECK(drawn[1].turns[0].max_tokens == 300);
  }
  SUBCASE("dataset.max_turns keeps the first turns") {
    Config capped;
    capped.dataset.max_turns = 1;
    SharegptStats stats;
    FileDatasetOptions options;
    options.stats = &stats;
    const auto cut = parse_sharegpt(kTwoTurns, capped, options);
    CHECK(cut[0].turns.size() == 1);
    CHECK(stats.cut_turns == 1);
    CHECK(stats.turns == 2);
  }
  SUBCASE("dataset.conversations keeps the first") {
    Config one;
    one.dataset.conversations = 1;
    one.dataset.conversations_set = true;
    CHECK(parse_sharegpt(kTwoTurns, one).size() == 1);
  }
}

TEST_CASE("sharegpt: the messages AIPerf drops are dropped, counted and reported") {
  const std::string text = R"([
{"id": "a", "conversations": [{"from": "gpt", "value": "I start."}, {"from": "human", "value": "Q"},
  {"from": "gpt", "value": "A"}, {"from": "bing", "value": "x"}]},
{"id": "b", "conversations": [{"from": "human", "value": ""}, {"from": "gpt", "value": "A"}]},
{"id": "c", "conversations": [{"from": "gpt", "value": "only a reply"}]},
{"id": "d", "conversations": [{"from": "user", "value": "no roles: prompt"},
  {"from": "assistant", "value": "no roles: reply"}]}
])";
  SharegptStats stats;
  FileDatasetOptions options;
  options.stats = &stats;
  const auto all = parse_sharegpt(text, Config{}, options);
  REQUIRE(all.size() == 2);
  CHECK(all[0].conversation_id == "a");
  REQUIRE(all[0].turns.size() == 1);
  CHECK(all[0].turns[0].user_text == "Q");
  CHECK(all[1].conversation_id == "d");
  CHECK(all[1].turns[0].user_text == "no roles: prompt");
  CHECK(stats.elements == 4);
  CHECK(stats.conversations == 2);
  CHECK(stats.skipped == 2);
  CHECK(stats.first_skipped_line == 4);
  CHECK(stats.unpaired == 2);  // a's leading gpt, c's lone gpt
  CHECK(stats.empty_pairs == 1);
  CHECK(stats.other_roles == 1);  // a's bing
  CHECK(stats.positional == 1);
  const auto lines = describe_sharegpt_stats(stats, Config{});
  std::string all_lines;
  for (const auto& line : lines) all_lines += line + "\n";
  CHECK(all_lines.find("skipped (no human -> gpt pair with both values non-empty): 2 elements, "
                       "the first on line 4") != std::string::npos);
  CHECK(all_lines.find("starting with gpt") != std::string::npos);
  CHECK(all_lines.find("from=gpt -> max_tokens = the reply's length in tokens") !=
        std::string::npos);
}

TEST_CASE("sharegpt: a malformed file names the file, line and key") {
  CHECK(sharegpt_error_of(R"({"conversations": []})") ==
        "chat.json:1: the file must be a JSON array of conversations");
  CHECK(sharegpt_error_of("[\n  {\"conversations\": []},\n  7\n]") ==
        "chat.json:3: element 1: expected an object {\"conversations\": [...]}, got a value");
  CHECK(sharegpt_error_of("[\n{\"id\": \"x\"}\n]") ==
        "chat.json:2: conversations: required: the messages [{\"from\", \"value\"}, ...]");
  CHECK(sharegpt_error_of("[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"},\n"
                          " {\"from\": 3, \"value\": \"b\"}]}]") ==
        "chat.json:1: conversations[1].from: expected a string, got a number");
  CHECK(sharegpt_error_of("[\n{\"conversations\": [{\"from\": \"human\"}]}]") ==
        "chat.json:2: conversations[0].value: required: the message's text");
  CHECK(sharegpt_error_of("[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\", "
                          "\"value\": \"b\"}]}]") ==
        "chat.json:2: conversations[0].value: duplicate key");
  const std::string broken = sharegpt_error_of("[\n{\"conversations\": [}\n]");
  CHECK(broken.rfind("chat.json:2: invalid JSON: ", 0) == 0);
  CHECK(sharegpt_error_of("[{\"conversations\": [{\"from\": \"gpt\", \"value\": \"x\"}]}]") ==
        "chat.json: no conversation with a human -> gpt pair (1 element(s), 1 skipped)");
  CHECK(sharegpt_error_of("").rfind("chat.json:1: invalid JSON: ", 0) == 0);
  CHECK(sharegpt_error_of("[{\"conversations\": [], \"x\": " + std::string(70, '[') +
                          std::string(70, ']') + "}]")
            .find("nested deeper than 64") != std::string::npos);
}

TEST_CASE("sharegpt: a file is read back by byte range, the same as in memory") {
  test::TempDir dir("convoy-sharegpt-");
  const auto path = dir.path() / "chat.json";
  {
    std::ofstream out(path, std::ios::binary);
    out << "\xEF\xBB\xBF" << kTwoTurns;
  }
  const auto dataset = open_sharegpt_dataset(path.string(), Config{});
  REQUIRE(dataset->size() == 2);
  const auto in_memory = parse_sharegpt(kTwoTurns);
  for (uint64_t i = 0; i < dataset->size(); ++i) {
    CHECK(testing::packed(dataset->conversation(i)) == testing::packed(in_memory[i]));
  }
  SUBCASE("raw: the file's content only, every non-final reply kept") {
    FileDatasetOptions raw;
    raw.raw = true;
    const auto content = open_sharegpt_dataset(path.string(), Config{}, raw);
    const auto first = content->conversation(0);
    CHECK(first.turns[0].recorded_reply == "Seven is a prime number.");
    CHECK(first.turns[1].delay_ms == kUnsetDelayMs);
    CHECK(content->conversation(1).conversation_id.empty());
  }
}

}  // namespace convoy::controller
