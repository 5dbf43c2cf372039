#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>
#include "controller/dataset/dataset.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/synthetic.hpp"
#include "dataset_test_util.hpp"

namespace convoy::controller {
namespace {

namespace fs = std::filesystem;

// A scratch folder removed at scope exit.
class DatasetDir {
 public:
  DatasetDir() {
    path_ = fs::temp_directory_path() /
            ("convoy-dataset-test-" + std::to_string(reinterpret_cast<uintptr_t>(this)) + "-" +
             std::to_string(::getpid()));
    fs::create_directories(path_);
  }
  ~DatasetDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  DatasetDir(const DatasetDir&) = delete;
  DatasetDir& operator=(const DatasetDir&) = delete;

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string error_of(const Config& config) {
  try {
    load_dataset(config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("load_dataset: synthetic") {
  Config config;
  config.dataset.conversations = 12;
  const auto all = load_dataset(config);
  REQUIRE(all.size() == 12);
  SUBCASE("deterministic, and element i is make_synthetic_conversation(config, i)") {
    const auto again = load_dataset(config);
    for (size_t i = 0; i < all.size(); ++i) {
      CHECK(testing::packed(all[i]) == testing::packed(again[i]));
      CHECK(testing::packed(all[i]) == testing::packed(make_synthetic_conversation(config, i)));
    }
  }
  SUBCASE("load.mode trace needs a trace") {
    config.load.mode = LoadMode::kTrace;
    config.source_path = "run.yaml";
    CHECK(error_of(config) ==
          "run.yaml: load.mode trace needs the timestamps of dataset.type mooncake or "
          "dynamo_trace");
  }
}

TEST_CASE("load_dataset: jsonl and mooncake files") {
  DatasetDir dir;
  SUBCASE("jsonl by path") {
    const auto file = dir.write("chat.jsonl", "{\"text\": \"hello\"}\n{\"text\": \"world\"}\n");
    Config config;
    config.dataset.type = DatasetType::kJsonl;
    config.dataset.path = file.string();
    const auto all = load_dataset(config);
    REQUIRE(all.size() == 2);
    CHECK(all[1].turns[0].user_text == "world");
  }
  SUBCASE("errors carry the path as opened") {
    const auto file = dir.write("bad.jsonl", "{\"text\": \"hello\"}\n{\"text\": 3}\n");
    Config config;
    config.dataset.type = DatasetType::kJsonl;
    config.dataset.path = file.string();
    CHECK(error_of(config) == file.string() + ":2: text: expected a string, got a number");
  }
  SUBCASE("a relative path resolves beside the config file") {
    dir.write("trace.jsonl",
              "{\"timestamp\": 5, \"input_length\": 8}\n"
              "{\"timestamp\": 7, \"input_length\": 8}\n");
    Config config;
    config.source_path = (dir.path() / "run.yaml").string();
    config.dataset.type = DatasetType::kMooncake;
    config.dataset.path = "trace.jsonl";
    config.load.mode = LoadMode::kTrace;
    CHECK(resolve_dataset_path(config) == (dir.path() / "trace.jsonl").string());
    const auto all = load_dataset(config);
    REQUIRE(all.size() == 2);
    CHECK(all[1].start_ns == 2'000'000);
  }
  SUBCASE("a missing file or path") {
    Config config;
    config.dataset.type = DatasetType::kJsonl;
    config.dataset.path = (dir.path() / "nope.jsonl").string();
    CHECK(error_of(config) == (dir.path() / "nope.jsonl").string() +
                                  ": cannot open dataset.path: No such file or directory");
    config.dataset.path.reset();
    CHECK(error_of(config) == "dataset.path is required with a file dataset (dataset.type jsonl)");
    config.dataset.type = DatasetType::kSharegpt;
    CHECK(error_of(config) ==
          "dataset.path is required with a file dataset (dataset.type sharegpt)");
  }
}

}  // namespace convoy::controller

namespace convoy::controller {

TEST_CASE("open_dataset: file datasets are read back from the open file by offset") {
  DatasetDir dir;
  const auto file = dir.write("chat.jsonl", "{\"text\": \"hello\"}\n{\"text\": \"world\"}\n");
  Config config;
  config.dataset.type = DatasetType::kJsonl;
  config.dataset.path = file.string();
  const auto dataset = open_dataset(config);
  REQUIRE(dataset->size() == 2);
  SUBCASE("a file renamed over it does not change what is read") {
    const auto other = dir.write("other.jsonl", "{\"text\": \"other\"}\n{\"text\": \"rows\"}\n");
    fs::rename(other, file);
    CHECK(dataset->conversation(1).turns[0].user_text == "world");
  }
  SUBCASE("a file rewritten in place fails as a run failure, not as bad input") {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << "{\"text\": 5}\n";
    CHECK_THROWS_AS(dataset->conversation(1), std::runtime_error);
    bool config_error = false;
    try {
      dataset->conversation(0);
    } catch (const ConfigError&) {
      config_error = true;
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find("changed during the run") != std::string::npos);
    }
    CHECK_FALSE(config_error);
  }
}

}  // namespace convoy::controller

namespace convoy::controller {

TEST_CASE("wire_bytes_bound is never below what a conversation packs to") {
  Config config;
  config.dataset.conversations = 50;
  config.dataset.history = HistoryMode::kRecorded;
  config.dataset.shared_prefix_tokens = 40;
  for (const auto& c : load_dataset(config)) {
    CHECK(wire_bytes_bound(c) >= testing::packed(c).size());
  }
  proto::Conversation big;
  big.index = UINT64_MAX;
  big.start_ns = INT64_MIN;
  big.first_turn = UINT32_MAX;
  big.conversation_id = std::string(70000, 'i');
  for (int k = 0; k < 20; ++k) {
    proto::Turn t;
    t.user_text = std::string(70000, 'u');
    t.messages_json = "[]";
    t.extra_json = std::string(300, 'e');
    t.recorded_reply = std::string(40, 'r');
    t.max_tokens = INT64_MIN;
    t.input_tokens_est = INT64_MAX;
    t.delay_ms = 1e300;
    big.turns.push_back(t);
  }
  CHECK(wire_bytes_bound(big) >= testing::packed(big).size());
}

}  // namespace convoy::controller
