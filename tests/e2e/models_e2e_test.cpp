// Several models in one run (target.models) end to end: convoy-mock serves two models at
// different speeds; each conversation draws one by weight and keeps it for every turn, and
// summary.json, records.jsonl, the console and report.html give the results per model.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

constexpr int kModelConversations = 48;

std::string models_config(const std::string& url, const std::string& models) {
  return "name: e2e-models\n"
         "seed: 5\n"
         "target:\n  url: \"" +
         url + "\"\n  models: " + models +
         "\n"
         "dataset:\n"
         "  type: synthetic\n"
         "  conversations: " +
         std::to_string(kModelConversations) +
         "\n"
         "  turns: {mean: 3, stddev: 0, min: 3, max: 3}\n"
         "  input_tokens: {mean: 32, stddev: 0}\n"
         "  output_tokens: {mean: 10, stddev: 0}\n"
         "load:\n  mode: concurrency\n  concurrency: 8\n  sessions: " +
         std::to_string(kModelConversations) +
         "\n"
         "workers:\n  local: 2\n";
}

double itl_p50(const rapidjson::Value& model) {
  REQUIRE(model["inter_token_latency"].IsObject());
  return model["inter_token_latency"]["p50"].GetDouble();
}

}  // namespace

TEST_CASE("target.models: conversations split by weight, keep their model, and differ in speed") {
  const fs::path dir = fresh_dir("e2e-models");
  const fs::path log = dir / "mock.jsonl";
  // Model b decodes at twice model a's step.
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--model", "model-a:4", "--model",
                   "model-b:8", "--log-requests", log.string()});
  const std::string url = mock_url(mock);
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << models_config(url,
                                      "[{name: model-a, weight: 3}, {name: model-b, weight: 1}]");
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", (dir / "out").string()});
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());

  // records.jsonl: every turn of a conversation on one model; conversations split near 3:1.
  std::map<uint64_t, std::set<std::string>> models_of_conversation;
  std::map<std::string, std::string> model_of_session;  // x_correlation_id -> model
  for (const auto& r : read_jsonl(dir / "out" / "records.jsonl")) {
    REQUIRE(r.HasMember("model"));
    models_of_conversation[r["conversation_index"].GetUint64()].insert(r["model"].GetString());
    model_of_session[r["x_correlation_id"].GetString()] = r["model"].GetString();
  }
  REQUIRE(models_of_conversation.size() == kModelConversations);
  int on_a = 0;
  for (const auto& [index, models] : models_of_conversation) {
    CHECK_MESSAGE(models.size() == 1, "conversation ", index);
    on_a += models.count("model-a") ? 1 : 0;
  }
  // 48 draws at p = 0.75: 36 expected, sd 3; the seed fixes the draw, the bounds say "by weight".
  CHECK(on_a >= 26);
  CHECK(on_a <= 46);
  CHECK(on_a < kModelConversations);

  // The mock saw the model records.jsonl names, for every request of the session.
  int logged = 0;
  for (const auto& line : read_jsonl(log)) {
    if (!line.HasMember("body") || !line["body"].IsObject()) continue;
    const std::string session = logged_header(line, "x-correlation-id");
    if (session.empty() || !model_of_session.count(session)) continue;
    ++logged;
    CHECK(std::string(line["body"]["model"].GetString()) == model_of_session[session]);
  }
  CHECK(logged == kModelConversations * 3);

  // summary.json models[]: counts by model, ITL p50 about 2x apart.
  const rapidjson::Document summary = read_json(dir / "out" / "summary.json");
  REQUIRE(summary.HasMember("models"));
  const auto& models = summary["models"];
  REQUIRE(models.Size() == 2);
  CHECK(std::string(models[0]["name"].GetString()) == "model-a");
  CHECK(models[0]["requests"].GetInt64() == on_a * 3);
  CHECK(models[1]["requests"].GetInt64() == (kModelConversations - on_a) * 3);
  const double ratio = itl_p50(models[1]) / itl_p50(models[0]);
  INFO("itl p50 a=" << itl_p50(models[0]) << " b=" << itl_p50(models[1]));
  CHECK(ratio > 1.6);
  CHECK(ratio < 2.5);
  // The console and report.html show them.
  CHECK(run.output().find("Per model") != std::string::npos);
  const std::string html = read_file(dir / "out" / "report.html");
  CHECK(html.find("<section id=\"models\">") != std::string::npos);
  CHECK(html.find("model-b") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("target.models: a model the server does not serve stops the run, naming the list") {
  const fs::path dir = fresh_dir("e2e-models-unserved");
  const fs::path log = dir / "mock.jsonl";
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--model", "model-a", "--model",
                   "model-b", "--log-requests", log.string()});
  const std::string url = mock_url(mock);
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << models_config(url, "[{name: model-a}, {name: model-c}]");
  Subprocess run(
      {bin("controller/convoy"), "run", cfg.string(), "-o", (dir / "out").string(), "--quiet"});
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 2);
  CHECK(run.output().find("target.models[1].name 'model-c' is not served") != std::string::npos);
  CHECK(run.output().find("model-a") != std::string::npos);
  CHECK(run.output().find("model-b") != std::string::npos);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());
  int generations = 0;
  for (const auto& line : read_jsonl(log)) {
    if (line.HasMember("body") && line["body"].IsObject()) ++generations;
  }
  CHECK(generations == 0);
  fs::remove_all(dir);
}
