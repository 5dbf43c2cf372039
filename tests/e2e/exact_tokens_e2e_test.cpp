// dataset.tokenizer end to end: convoy run against convoy-mock with a
// real tokenizer.json; tokenizer: server against a mock without /tokenize; a bad tokenizer file
// refused by convoy validate and convoy run with exit 2 and nothing sent.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>

#include "common/exit_codes.hpp"
#include "controller/tokenizer_files.hpp"
#include "e2e/mock_log.hpp"
#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

TEST_CASE("exact tokens e2e: every request's ISL is the drawn N, OSL counted from the text") {
  const fs::path dir = fresh_dir("e2e-exact-tokens");
  const fs::path out = dir / "out";
  // No usage from the server's counts: ISL is what convoy built, OSL the worker's count.
  Subprocess run(quickstart_run_argv(
      out, {"dataset.tokenizer=" + tokenizer_folder("qwen3"), "dataset.conversations=6",
            "dataset.input_tokens.mean=333", "dataset.input_tokens.stddev=0",
            "target.use_server_token_counts=false", "mock.speedup=20"}));
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  const auto records = read_jsonl(out / "records.jsonl");
  REQUIRE(!records.empty());
  for (const auto& r : records) {
    CHECK(r["metrics"]["isl"].GetInt64() == 333);
    CHECK(r["metrics"]["osl"].GetInt64() > 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("exact tokens e2e: tokenizer: server without /tokenize exits 2, nothing sent") {
  const fs::path dir = fresh_dir("e2e-exact-no-tokenize");
  const fs::path out = dir / "out";
  Subprocess run(
      quickstart_run_argv(out, {"dataset.tokenizer=server", "mock.extra_args=[--no-tokenize]"}));
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == convoy::kExitBadInput);
  CHECK(run.output().find("/tokenize: 404") != std::string::npos);
  CHECK(!fs::exists(out));  // no output folder: no traffic
  fs::remove_all(dir);
}

TEST_CASE("exact tokens e2e: a file that is not a tokenizer is refused by validate and run") {
  const fs::path dir = fresh_dir("e2e-exact-bad-file");
  const fs::path bad = dir / "tokenizer.json";
  std::ofstream(bad) << "[1, 2, 3]";
  for (const char* command : {"validate", "run"}) {
    std::vector<std::string> argv = {bin("controller/convoy"), command,
                                     src("configs/quickstart.yaml"), "--set",
                                     "dataset.tokenizer=" + bad.string()};
    if (std::string(command) == "run") argv.insert(argv.end(), {"-o", (dir / "out").string()});
    Subprocess p(argv);
    const auto rc = p.wait(60);
    INFO(command << ": " << p.output());
    REQUIRE(rc.has_value());
    CHECK(*rc == convoy::kExitBadInput);
    CHECK(p.output().find("dataset.tokenizer: ") != std::string::npos);
    CHECK(p.output().find(bad.string()) != std::string::npos);
    CHECK(!fs::exists(dir / "out"));
  }
  fs::remove_all(dir);
}
