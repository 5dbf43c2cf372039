// `convoy dataset convert`: each format -> convoy JSONL, loaded back by dataset.type jsonl. The
// fixtures are written here from each format's documented shape.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "controller/dataset/aiperf_jsonl.hpp"
#include "controller/dataset/convert.hpp"
#include "controller/dataset/jsonl_dataset.hpp"
#include "controller/dataset/sharegpt.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

void write_convert_input(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// What a request is made of: equal for every turn of `a` and `b`.
void check_same_turns(const std::vector<proto::Conversation>& a,
                      const std::vector<proto::Conversation>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i].conversation_id == b[i].conversation_id);
    CHECK(a[i].correlation_id == b[i].correlation_id);
    REQUIRE(a[i].turns.size() == b[i].turns.size());
    for (size_t k = 0; k < a[i].turns.size(); ++k) {
      CAPTURE(k);
      CHECK(a[i].turns[k].user_text == b[i].turns[k].user_text);
      CHECK(a[i].turns[k].messages_json == b[i].turns[k].messages_json);
      CHECK(a[i].turns[k].max_tokens == b[i].turns[k].max_tokens);
      CHECK(a[i].turns[k].delay_ms == b[i].turns[k].delay_ms);
      CHECK(a[i].turns[k].extra_json == b[i].turns[k].extra_json);
    }
  }
}

std::vector<proto::Conversation> load_jsonl(const std::filesystem::path& path) {
  return materialize(*open_jsonl_dataset(path.string(), Config{}));
}

}  // namespace

TEST_CASE("convert: sharegpt -> convoy JSONL loads back with the same turns") {
  test::TempDir dir("convoy-convert-");
  const auto in = dir.path() / "chat.json";
  const auto out = dir.path() / "chat.jsonl";
  write_convert_input(in, R"([
 {"id": "a", "conversations": [{"from": "human", "value": "One?"}, {"from": "gpt", "value": "1"},
   {"from": "human", "value": "Two?"}, {"from": "gpt", "value": "Two, the answer is two."}]},
 {"id": "a", "conversations": [{"from": "gpt", "value": "dropped"}, {"from": "human", "value": "Q"},
   {"from": "gpt", "value": "A reply of some length"}]},
 {"conversations": [{"from": "human", "value": "no id"}, {"from": "gpt", "value": "ok"}]}
])");
  std::ostringstream report;
  CHECK(convert_dataset(in.string(), out.string(), std::nullopt, report) == 3);
  const std::string printed = report.str();
  CHECK(printed.find("format: sharegpt (detected: the file is a JSON array)") == 0);
  CHECK(printed.find("from=gpt -> max_tokens = the reply's length in tokens; the reply kept for "
                     "history: recorded: 4 turns") != std::string::npos);
  CHECK(printed.find("dropped unpaired human/gpt messages") != std::string::npos);
  CHECK(printed.find("repeated id -> conversation_id \"<id>~<n>\"") != std::string::npos);
  CHECK(printed.find("wrote 3 conversations, 4 turns") != std::string::npos);
  const auto converted = load_jsonl(out);
  const auto original = materialize(*open_sharegpt_dataset(in.string(), Config{}));
  REQUIRE(converted.size() == 3);
  CHECK(converted[1].conversation_id == "a~1");
  CHECK(original[1].conversation_id == "a");
  auto renamed = original;
  renamed[1].conversation_id = "a~1";
  check_same_turns(converted, renamed);
  CHECK(converted[0].turns[0].recorded_reply == "1");
}

TEST_CASE("convert: a ShareGPT system message becomes the first turn's messages") {
  test::TempDir dir("convoy-convert-");
  const auto in = dir.path() / "chat.json";
  const auto out = dir.path() / "chat.jsonl";
  write_convert_input(in, R"([{"conversations": [{"from": "system", "value": "Be terse."},
    {"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello"}]}])");
  std::ostringstream report;
  convert_dataset(in.string(), out.string(), std::string("sharegpt"), report);
  CHECK(report.str().find("format: sharegpt (--from)") == 0);
  const auto converted = load_jsonl(out);
  CHECK(converted[0].turns[0].messages_json ==
        "[{\"role\":\"system\",\"content\":\"Be terse.\"},{\"role\":\"user\",\"content\":\"Hi\"}]");
}

TEST_CASE("convert: aiperf single_turn and multi_turn -> convoy JSONL, the same turns") {
  test::TempDir dir("convoy-convert-");
  const auto out = dir.path() / "out.jsonl";
  SUBCASE("single_turn") {
    const auto in = dir.path() / "single.jsonl";
    write_convert_input(
        in,
        "{\"text\": \"Alpha\", \"output_length\": 12}\n"
        "{\"session_id\": \"s\", \"text\": \"Beta\", \"extra\": {\"top_p\": 0.5}}\n"
        "{\"session_id\": \"s\", \"texts\": [\"Gamma\", \"Delta\"], \"delay\": 300}\n");
    std::ostringstream report;
    CHECK(convert_dataset(in.string(), out.string(), std::nullopt, report) == 2);
    CHECK(report.str().find("format: aiperf_single_turn (detected: the first row has \"text\")") ==
          0);
    CHECK(report.str().find("output_length -> max_tokens: 1 turns") != std::string::npos);
    CHECK(report.str().find("texts (several) -> one user message of text parts: 1 turns") !=
          std::string::npos);
    std::ifstream again(in);
    check_same_turns(load_jsonl(out), parse_aiperf_dataset(again, in.string(), false, Config{}));
  }
  SUBCASE("multi_turn") {
    const auto in = dir.path() / "multi.jsonl";
    write_convert_input(
        in,
        "{\"session_id\": \"m\", \"turns\": [{\"text\": \"One\"}, {\"text\": \"Two\", "
        "\"delay\": 1000, \"output_length\": 5}]}\n");
    std::ostringstream report;
    CHECK(convert_dataset(in.string(), out.string(), std::nullopt, report) == 1);
    CHECK(report.str().find("format: aiperf_multi_turn (detected: the first row has \"turns\")") ==
          0);
    std::ifstream again(in);
    check_same_turns(load_jsonl(out), parse_aiperf_dataset(again, in.string(), true, Config{}));
  }
}

TEST_CASE("convert: bad input names file, line and key, and writes nothing") {
  test::TempDir dir("convoy-convert-");
  const auto out = dir.path() / "out.jsonl";
  const auto in = dir.path() / "bad.json";
  write_convert_input(in, "[\n{\"conversations\": [{\"from\": \"human\"}]}\n]");
  std::ostringstream report;
  CHECK(test::error_message<ConfigError>([&] {
          convert_dataset(in.string(), out.string(), std::nullopt, report);
        }) == in.string() + ":2: conversations[0].value: required: the message's text");
  CHECK(!std::filesystem::exists(out));
  write_convert_input(in, "{\"input_length\": 10, \"hash_ids\": [1]}\n");
  CHECK(test::error_message<ConfigError>([&] {
          convert_dataset(in.string(), out.string(), std::nullopt, report);
        }).find("Mooncake trace") != std::string::npos);
  CHECK(test::error_message<ConfigError>([&] {
          convert_dataset(in.string(), in.string(), std::nullopt, report);
        }).find("OUT is IN") != std::string::npos);
}

}  // namespace convoy::controller
