// The mock's /metrics in vLLM's and Dynamo's frontend names (mock/server_metrics.hpp): what each
// series counts, per engine, and that promtool accepts the whole exposition.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "mock/engine.hpp"
#include "mock/server_metrics.hpp"
#include "test_client.hpp"

namespace convoy::mock {
namespace {

using test::Client;
using test::RunningMock;

// The value of the exposition line for exactly `series` (name{labels}); nullopt when absent.
std::optional<double> value_of(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

// The sum over every sample of `name` whose labels contain `needle`.
double sum_of(const std::string& text, const std::string& name, const std::string& needle = "") {
  std::istringstream in(text);
  std::string line;
  double sum = 0;
  while (std::getline(in, line)) {
    if (line.rfind(name + "{", 0) != 0) continue;
    const size_t close = line.find("} ");
    if (close == std::string::npos || line.substr(0, close).find(needle) == std::string::npos) {
      continue;
    }
    sum += std::stod(line.substr(close + 2));
  }
  return sum;
}

const std::string kE0 = R"(model_name="m",engine="0")";
const std::string kE1 = R"(model_name="m",engine="1")";

TEST_CASE("server metrics render vLLM series per engine and Dynamo frontend series") {
  ServerMetrics metrics;
  metrics.on_admit(1, 100, 64);
  metrics.on_first_token(1, 100, 0.03);
  metrics.on_end(1, Endpoint::kChat, true, 8, ServerMetrics::Outcome::kSuccess);
  metrics.on_end(-1, Endpoint::kCompletions, false, 0, ServerMetrics::Outcome::kRejected, 503);
  const std::vector<EngineGauges> gauges = {{1, 2, 1, 4, 16}, {0, 0, 0, 0, 16}};
  const std::string text = metrics.prometheus(gauges, "m");
  INFO(text);

  CHECK(value_of(text, "vllm:num_requests_running{" + kE0 + "}") == 1);
  CHECK(value_of(text, "vllm:num_requests_waiting{" + kE0 + "}") == 2);
  CHECK(value_of(text, "vllm:kv_cache_usage_perc{" + kE0 + "}") == 0.25);
  CHECK(value_of(text, "vllm:kv_cache_usage_perc{" + kE1 + "}") == 0);
  CHECK(value_of(text, "vllm:prompt_tokens_total{" + kE1 + "}") == 100);
  CHECK(value_of(text, "vllm:prompt_tokens_total{" + kE0 + "}") == 0);
  CHECK(value_of(text, "vllm:generation_tokens_total{" + kE1 + "}") == 8);
  CHECK(value_of(text, "vllm:prefix_cache_queries_total{" + kE1 + "}") == 100);
  CHECK(value_of(text, "vllm:prefix_cache_hits_total{" + kE1 + "}") == 64);
  CHECK(value_of(text, "vllm:num_preemptions_total{" + kE0 + "}") == 0);
  // vLLM's own bounds: 0.03 s falls in le="0.04", not in le="0.02".
  CHECK(value_of(text, "vllm:time_to_first_token_seconds_bucket{" + kE1 + ",le=\"0.02\"}") == 0);
  CHECK(value_of(text, "vllm:time_to_first_token_seconds_bucket{" + kE1 + ",le=\"0.04\"}") == 1);
  CHECK(value_of(text, "vllm:time_to_first_token_seconds_bucket{" + kE1 + ",le=\"2560\"}") == 1);
  CHECK(value_of(text, "vllm:time_to_first_token_seconds_count{" + kE1 + "}") == 1);
  CHECK(text.find("# TYPE vllm:prompt_tokens_total counter\n") != std::string::npos);
  CHECK(text.find("# TYPE vllm:time_to_first_token_seconds histogram\n") != std::string::npos);

  CHECK(value_of(text,
                 R"(dynamo_frontend_requests_total{endpoint="chat_completions",error_type="",)"
                 R"(model="m",request_type="stream",status="success"})") == 1);
  CHECK(value_of(text,
                 R"(dynamo_frontend_requests_total{endpoint="completions",)"
                 R"(error_type="overload",model="m",request_type="unary",status="error"})") == 1);
  CHECK(value_of(text, R"(dynamo_frontend_inflight_requests{model="m"})") == 3);
  CHECK(value_of(text, R"(dynamo_frontend_queued_requests{model="m"})") == 3);  // waiting+prefill
  CHECK(value_of(text, R"(dynamo_frontend_output_tokens_total{model="m"})") == 8);
  // Dynamo's log buckets: 0.03 s falls in le="0.047", not in le="0.022".
  CHECK(value_of(text,
                 R"(dynamo_frontend_time_to_first_token_seconds_bucket{model="m",le="0.022"})") ==
        0);
  CHECK(value_of(text,
                 R"(dynamo_frontend_time_to_first_token_seconds_bucket{model="m",le="0.047"})") ==
        1);
  CHECK(value_of(text, R"(dynamo_frontend_time_to_first_token_seconds_count{model="m"})") == 1);
}

ApiRequest chat_request(int64_t prompt_tokens, int64_t max_tokens) {
  ApiRequest r;
  r.endpoint = Endpoint::kChat;
  r.stream = true;
  r.max_tokens = max_tokens;
  r.prompt = std::string(static_cast<size_t>(prompt_tokens) * 4, 'x');
  r.prompt_tokens = prompt_tokens;
  return r;
}

TEST_CASE("a request cut short counts the tokens generated so far, as cancelled") {
  Options options = test::test_options();
  options.workers = 1;
  options.max_num_seqs = 1;
  Engine engine(options);
  const auto now = Clock::now();
  auto decoding = engine.submit(
      chat_request(10, 10), {}, [] {}, now);
  auto queued = engine.submit(
      chat_request(10, 10), {}, [] {}, now);
  REQUIRE(std::holds_alternative<Submitted>(decoding));
  REQUIRE(std::holds_alternative<Submitted>(queued));
  const JobPtr first = std::get<Submitted>(decoding).job;
  const JobPtr second = std::get<Submitted>(queued).job;
  CHECK_FALSE(std::get<Submitted>(queued).admitted);

  std::string text = engine.metrics_text();
  CHECK(value_of(text, R"(vllm:num_requests_running{model_name="mock-model",engine="0"})") == 1);
  CHECK(value_of(text, R"(vllm:num_requests_waiting{model_name="mock-model",engine="0"})") == 1);
  CHECK(value_of(text, R"(dynamo_frontend_queued_requests{model="mock-model"})") == 2);

  engine.first_token(first, now);
  engine.abandon(second, 7);  // still queued: nothing generated, whatever the caller says
  engine.abandon(first, 4);
  text = engine.metrics_text();
  INFO(text);
  CHECK(value_of(text, R"(vllm:generation_tokens_total{model_name="mock-model",engine="0"})") == 4);
  CHECK(value_of(text, R"(vllm:prompt_tokens_total{model_name="mock-model",engine="0"})") == 10);
  CHECK(value_of(text, R"(dynamo_frontend_requests_total{endpoint="chat_completions",)"
                       R"(error_type="cancelled",model="mock-model",request_type="stream",)"
                       R"(status="error"})") == 2);
  CHECK(sum_of(text, "vllm:num_requests_running") == 0);
  CHECK(value_of(text, R"(dynamo_frontend_inflight_requests{model="mock-model"})") == 0);
  engine.shutdown();
}

TEST_CASE("mock /metrics counts the prompt and output tokens it served per engine") {
  Options options = test::test_options();
  options.workers = 2;
  options.speedup = 100;
  RunningMock mock(options);
  Client client(mock.port);
  int64_t prompt = 0;
  int64_t completion = 0;
  int64_t cached = 0;
  const std::string turn1 = test::chat_body({{"user", std::string(300, 'a')}}, 5, false);
  const std::string turn2 = test::chat_body(
      {{"user", std::string(300, 'a')}, {"assistant", "x"}, {"user", "more"}}, 7, false);
  for (const std::string& body : {turn1, turn1, turn2}) {
    const auto res = client.post("/v1/chat/completions", body);
    REQUIRE(res.status == 200);
    const auto doc = test::parse_json(res.body);
    prompt += doc["usage"]["prompt_tokens"].GetInt64();
    completion += doc["usage"]["completion_tokens"].GetInt64();
    cached += doc["usage"]["prompt_tokens_details"]["cached_tokens"].GetInt64();
  }
  const auto streamed = client.post(
      "/v1/chat/completions",
      test::chat_body({{"user", "hi"}}, 3, true, R"("stream_options":{"include_usage":true})"));
  REQUIRE(streamed.status == 200);
  const auto events = test::sse_data(streamed.body);
  REQUIRE(events.size() >= 2);  // ..., the usage chunk, [DONE]
  const auto usage = test::parse_json(events[events.size() - 2]);
  prompt += usage["usage"]["prompt_tokens"].GetInt64();
  completion += usage["usage"]["completion_tokens"].GetInt64();

  const auto res = client.get("/metrics");
  REQUIRE(res.status == 200);
  const std::string& text = res.body;
  INFO(text);
  CHECK(cached > 0);  // the repeated prompt hit the prefix cache
  CHECK(sum_of(text, "vllm:prompt_tokens_total") == static_cast<double>(prompt));
  CHECK(sum_of(text, "vllm:generation_tokens_total") == static_cast<double>(completion));
  CHECK(sum_of(text, "vllm:prefix_cache_queries_total") == static_cast<double>(prompt));
  CHECK(sum_of(text, "vllm:prefix_cache_hits_total") == static_cast<double>(cached));
  CHECK(sum_of(text, "vllm:time_to_first_token_seconds_count") == 4);
  CHECK(text.find("vllm:num_requests_waiting{model_name=\"mock-model\",engine=\"1\"} 0") !=
        std::string::npos);
  CHECK(sum_of(text, "dynamo_frontend_requests_total", "status=\"success\"") == 4);
  CHECK(sum_of(text, "dynamo_frontend_requests_total", "request_type=\"stream\"") == 1);
  CHECK(sum_of(text, "dynamo_frontend_output_tokens_total") == static_cast<double>(completion));
  CHECK(sum_of(text, "dynamo_frontend_time_to_first_token_seconds_count") == 4);
  CHECK(sum_of(text, "dynamo_frontend_inflight_requests") == 0);
}

// `promtool check metrics` on `text`: its exit status and what it printed.
std::pair<int, std::string> promtool_check(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("convoy-mock-metrics-" + std::to_string(::getpid()) + ".prom");
  std::ofstream(path) << text;
  const std::string command = "promtool check metrics < '" + path.string() + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = ::pclose(pipe);
  std::filesystem::remove(path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_CASE("the mock's /metrics passes promtool check metrics") {
  if (!std::filesystem::exists("/usr/bin/promtool")) {
    MESSAGE("promtool is not installed (scripts/setup installs prometheus): skipped");
    return;
  }
  Options options = test::test_options();
  options.workers = 2;
  options.speedup = 100;
  RunningMock mock(options);
  Client client(mock.port);
  REQUIRE(
      client.post("/v1/chat/completions", test::chat_body({{"user", "hello"}}, 2, false)).status ==
      200);
  REQUIRE(
      client.post("/v1/chat/completions", test::chat_body({{"user", "hello"}}, 2, true)).status ==
      200);
  REQUIRE(client.post("/v1/completions", R"({"model":"nope","prompt":"a"})").status == 404);
  const auto res = client.get("/metrics");
  REQUIRE(res.status == 200);
  const auto checked = promtool_check(res.body);
  const int rc = checked.first;
  const std::string& out = checked.second;
  INFO(out);
  // promtool's linter also says vLLM's names "should not contain ':'" (colons are reserved for
  // recording rules, and vLLM uses them anyway): those lines, and only those, are expected.
  std::istringstream lines(out);
  std::string line;
  int colon_lines = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const bool colon_rule = line.rfind("vllm:", 0) == 0 &&
                            line.find(" metric names should not contain ':'") == line.find(' ');
    CHECK_MESSAGE(colon_rule, line);
    colon_lines += colon_rule ? 1 : 0;
  }
  CHECK(out.find("error while linting") == std::string::npos);  // it parsed
  CHECK((rc == 0 || (rc == 3 && colon_lines > 0)));
}

}  // namespace
}  // namespace convoy::mock
