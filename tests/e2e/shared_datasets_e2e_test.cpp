// The datasets others already have, end to end on convoy-mock: ShareGPT (configs/sharegpt.yaml),
// AIPerf's single_turn and multi_turn JSONL, and `convoy dataset convert`'s output.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// (last user message, max_tokens) of every chat request the mock logged, sorted.
using Asked = std::vector<std::pair<std::string, int64_t>>;

Asked asked_max_tokens(const fs::path& log) {
  Asked asked;
  for (const auto& line : read_jsonl(log)) {
    if (!line.HasMember("body") || !line["body"].IsObject()) continue;
    const auto& body = line["body"];
    if (!body.HasMember("messages") || !body.HasMember("max_tokens")) continue;
    const auto& messages = body["messages"];
    const auto& last = messages[messages.Size() - 1];
    std::string text = last["content"].IsString() ? last["content"].GetString() : "(parts)";
    asked.emplace_back(text, body["max_tokens"].GetInt64());
  }
  std::sort(asked.begin(), asked.end());
  return asked;
}

struct SharedRun {
  int rc = -1;
  std::string output;
  size_t records = 0;
  Asked asked;
};

// `convoy run CONFIG` against a convoy-mock of its own that logs every request.
SharedRun run_on_mock(const fs::path& dir, const std::string& config,
                      std::vector<std::string> sets) {
  const fs::path log = dir / "requests.jsonl";
  Subprocess mock(
      {bin("mock/convoy-mock"), "--port", "0", "--speedup", "50", "--log-requests", log.string()});
  std::vector<std::string> argv = {bin("controller/convoy"), "run",    config, "-o",
                                   (dir / "out").string(),   "--quiet"};
  sets.push_back("target.url=" + mock_url(mock));
  sets.push_back("session_routing.mode=off");
  for (const auto& s : sets) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  Subprocess run(argv);
  const auto rc = run.wait(90);
  SharedRun result;
  result.output = run.output();
  result.rc = rc.value_or(-1);
  mock.signal(SIGTERM);
  (void)mock.wait(30);
  if (fs::exists(dir / "out" / "records.jsonl")) {
    result.records = read_jsonl(dir / "out" / "records.jsonl").size();
  }
  if (fs::exists(log)) result.asked = asked_max_tokens(log);
  return result;
}

int64_t estimated_tokens(const std::string& text) {
  return static_cast<int64_t>((text.size() + 3) / 4);
}

}  // namespace

TEST_CASE("configs/sharegpt.yaml runs on convoy-mock, each turn asking for its reply's length") {
  const fs::path dir = fresh_dir("e2e-sharegpt");
  const SharedRun run = run_on_mock(dir, src("configs/sharegpt.yaml"), {});
  INFO(run.output);
  REQUIRE(run.rc == 0);
  CHECK(run.records == 50);  // 20 conversations, 50 human -> gpt turns
  // The file's turns and their replies' estimated lengths.
  auto file = parse_json(read_file(src("configs/data/sharegpt-example.json")));
  Asked expected;
  for (const auto& element : file.GetArray()) {
    const auto& messages = element["conversations"];
    for (rapidjson::SizeType k = 0; k + 1 < messages.Size(); ++k) {
      if (std::string(messages[k]["from"].GetString()) != "human") continue;
      expected.emplace_back(messages[k]["value"].GetString(),
                            estimated_tokens(messages[k + 1]["value"].GetString()));
    }
  }
  std::sort(expected.begin(), expected.end());
  CHECK(expected.size() == 50);
  CHECK(run.asked == expected);
  fs::remove_all(dir);
}

TEST_CASE("AIPerf single_turn and multi_turn JSONL run on convoy-mock as they are") {
  const fs::path dir = fresh_dir("e2e-aiperf-jsonl");
  const fs::path data = dir / "data.jsonl";
  std::string type;
  size_t turns = 0;
  SUBCASE("single_turn") {
    type = "aiperf_single_turn";
    std::ofstream(data) << "{\"text\": \"single one\", \"output_length\": 7}\n"
                        << "{\"session_id\": \"s\", \"text\": \"grouped one\"}\n"
                        << "{\"session_id\": \"s\", \"text\": \"grouped two\", \"delay\": 10, "
                        << "\"output_length\": 9}\n";
    turns = 3;
  }
  SUBCASE("multi_turn") {
    type = "aiperf_multi_turn";
    std::ofstream(data) << "{\"session_id\": \"m\", \"turns\": [{\"text\": \"grouped one\"}, "
                        << "{\"text\": \"grouped two\", \"output_length\": 9}]}\n"
                        << "{\"turns\": [{\"text\": \"single one\", \"output_length\": 7}]}\n";
    turns = 3;
  }
  const SharedRun run = run_on_mock(dir, src("configs/quickstart.yaml"),
                                    {"dataset.type=" + type, "dataset.path=" + data.string(),
                                     "dataset.output_tokens={mean: 5, stddev: 0}"});
  INFO(run.output);
  REQUIRE(run.rc == 0);
  CHECK(run.records == turns);
  const Asked expected = {{"grouped one", 5}, {"grouped two", 9}, {"single one", 7}};
  CHECK(run.asked == expected);
  fs::remove_all(dir);
}

TEST_CASE("convoy dataset convert writes JSONL that dataset.type jsonl runs") {
  const fs::path dir = fresh_dir("e2e-convert");
  const fs::path converted = dir / "converted.jsonl";
  Subprocess convert({bin("controller/convoy"), "dataset", "convert",
                      src("configs/data/sharegpt-example.json"), converted.string()});
  const auto rc = convert.wait(60);
  INFO(convert.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  CHECK(convert.output().find("format: sharegpt (detected: the file is a JSON array)") !=
        std::string::npos);
  CHECK(convert.output().find("from=system (first message) -> the conversation's system prompt: "
                              "4 conversations") != std::string::npos);
  CHECK(convert.output().find("wrote 20 conversations, 50 turns") != std::string::npos);
  const SharedRun run = run_on_mock(dir, src("configs/quickstart.yaml"),
                                    {"dataset.type=jsonl", "dataset.path=" + converted.string()});
  INFO(run.output);
  REQUIRE(run.rc == 0);
  CHECK(run.records == 50);
  fs::remove_all(dir);
}

TEST_CASE("a malformed shared dataset exits 2 naming file, line and key, and sends nothing") {
  const fs::path dir = fresh_dir("e2e-shared-bad");
  const fs::path data = dir / "data.json";
  std::string type = "sharegpt";
  std::string expected;
  SUBCASE("a ShareGPT message without a value") {
    std::ofstream(data) << "[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, "
                        << "{\"from\": \"gpt\"}]}\n]\n";
    expected = data.string() + ":2: conversations[1].value: required";
  }
  SUBCASE("a ShareGPT file that is no array") {
    std::ofstream(data) << "{\"conversations\": []}\n";
    expected = data.string() + ":1: the file must be a JSON array of conversations";
  }
  SUBCASE("an AIPerf image turn") {
    type = "aiperf_single_turn";
    std::ofstream(data) << "{\"text\": \"a\"}\n{\"text\": \"b\", \"images\": [\"x.png\"]}\n";
    expected = data.string() + ":2: images: convoy sends text only";
  }
  SUBCASE("max_turns on a jsonl dataset") {
    type = "jsonl";
    std::ofstream(data) << "{\"text\": \"a\"}\n";
    expected = "dataset.max_turns";
  }
  const fs::path log = dir / "requests.jsonl";
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--log-requests", log.string()});
  std::vector<std::string> sets = {"dataset.type=" + type, "dataset.path=" + data.string(),
                                   "target.url=" + mock_url(mock)};
  if (type == "jsonl") sets.push_back("dataset.max_turns=2");
  Subprocess run(quickstart_run_argv(dir / "out", sets));
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 2);
  CHECK(run.output().find(expected) != std::string::npos);
  mock.signal(SIGTERM);
  (void)mock.wait(30);
  CHECK(asked_max_tokens(log).empty());  // nothing sent
  CHECK_FALSE(fs::exists(dir / "out" / "records.jsonl"));
  fs::remove_all(dir);
}
