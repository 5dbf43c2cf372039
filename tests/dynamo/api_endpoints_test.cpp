// The Responses and Messages APIs against the real Dynamo 1.6.1 frontend (messages served with
// --enable-anthropic-api): short runs where every request succeeds with TTFT, ITL, ISL and OSL
// taken from each API's own events; and responses_state server, which 1.6.1 refuses with a 501
// (`previous_response_id` is not supported), so the run shows that answer on turn 2.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dynamo/dynamo_stack.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

constexpr int kDynApiConversations = 3;
constexpr int kDynApiTurns = 2;
constexpr int kDynApiOutputTokens = 6;

struct DynApiRun {
  int rc = -1;
  std::string output;
  rapidjson::Document summary;
  std::vector<rapidjson::Document> records;
};

DynApiRun run_dynamo_api(const DynamoStack& stack, const fs::path& dir, const std::string& name,
                         const std::string& target_extra) {
  const fs::path config = dir / (name + ".yaml");
  std::ofstream(config) << "name: " << name << "\ntarget:\n  url: " << stack.url()
                        << "\n  model: Qwen/Qwen3-0.6B\n  streaming: true\n"
                        << target_extra
                        << "dataset:\n  type: synthetic\n  conversations: " << kDynApiConversations
                        << "\n  turns: {mean: " << kDynApiTurns
                        << ", stddev: 0, min: " << kDynApiTurns << ", max: " << kDynApiTurns
                        << "}\n  input_tokens: {mean: 32, stddev: 0}\n"
                           "  output_tokens: {mean: "
                        << kDynApiOutputTokens
                        << ", stddev: 0}\n"
                           "load: {mode: concurrency, concurrency: 2}\n"
                           "workers: {local: 1}\noutput: {html: false}\n";
  const fs::path out = dir / name;
  Subprocess p({bin("controller/convoy"), "run", config.string(), "-o", out.string()});
  const auto rc = p.wait(240);
  DynApiRun r;
  r.rc = rc.value_or(-1);
  r.output = p.output();
  if (fs::exists(out / "summary.json")) r.summary = read_json(out / "summary.json");
  if (fs::exists(out / "records.jsonl")) r.records = read_jsonl(out / "records.jsonl");
  return r;
}

void check_all_ok(const DynApiRun& r) {
  INFO(r.output);
  REQUIRE(r.rc == 0);
  REQUIRE(r.summary.IsObject());
  const auto& s = r.summary;
  CHECK(s["request_count"]["avg"].GetDouble() == kDynApiConversations * kDynApiTurns);
  CHECK(s["error_request_count"]["avg"].GetDouble() == 0);
  for (const char* metric : {"time_to_first_token", "inter_token_latency", "input_sequence_length",
                             "output_sequence_length"}) {
    CAPTURE(metric);
    REQUIRE(s.HasMember(metric));
    CHECK(s[metric]["count"].GetInt64() == kDynApiConversations * kDynApiTurns);
  }
  // The frontend's own usage: exactly the requested output, and an input that grows by turn.
  CHECK(s["output_sequence_length"]["avg"].GetDouble() == kDynApiOutputTokens);
  CHECK(s["input_sequence_length"]["min"].GetDouble() > 0);
  for (const auto& rec : r.records) {
    CHECK(rec["http_status"].GetInt64() == 200);
    CHECK(rec["metrics"]["osl"].GetInt64() == kDynApiOutputTokens);
  }
}

}  // namespace

TEST_CASE("the real Dynamo 1.6.1 serves responses and messages: every request OK, all metrics") {
  DynamoStack stack(
      {.workers = 1, .speedup_ratio = 50, .frontend_args = {"--enable-anthropic-api"}});
  CONVOY_REQUIRE_DYNAMO(stack);
  const fs::path dir = fresh_dir("dynamo-api-endpoints");
  SUBCASE("responses") {
    check_all_ok(run_dynamo_api(stack, dir, "responses", "  endpoint: responses\n"));
  }
  SUBCASE("messages") {
    check_all_ok(run_dynamo_api(stack, dir, "messages", "  endpoint: messages\n"));
  }
  SUBCASE("responses_state server: 1.6.1 answers previous_response_id with 501") {
    const DynApiRun r = run_dynamo_api(stack, dir, "server-state",
                                       "  endpoint: responses\n  responses_state: server\n");
    INFO(r.output);
    int first_ok = 0;
    int refused = 0;
    for (const auto& rec : r.records) {
      if (rec["turn_index"].GetInt64() == 0 && rec["http_status"].GetInt64() == 200) ++first_ok;
      if (rec["turn_index"].GetInt64() == 1 && rec["http_status"].GetInt64() == 501) {
        ++refused;
        CHECK(std::string(rec["error"]["message"].GetString()) ==
              "Validation: `previous_response_id` is not supported.");
      }
    }
    CHECK(first_ok == kDynApiConversations);
    CHECK(refused == kDynApiConversations);
  }
  fs::remove_all(dir);
}
