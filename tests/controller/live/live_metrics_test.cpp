// The live room (controller/live/): LiveMetrics updated the way the run updates it, then
// scraped over a real loopback socket with libcurl; the stage series; bind failures; promtool
// on the exposition; the loopback warning shared with workers.listen.
#include <curl/curl.h>
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "controller/live/listen_exposure.hpp"
#include "controller/live/live_metrics.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using convoy::live::ListenError;
using convoy::live::LiveMetrics;

namespace {

size_t append_body(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// GET `url`: the HTTP status and the body (status 0: no answer within 5 s).
std::pair<long, std::string> http_get(const std::string& url) {
  std::string body;
  long status = 0;
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(curl) == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  }
  curl_easy_cleanup(curl);
  return {status, body};
}

// A streamed reply: sent at 10 ms (intended 8 ms), first token at 60 ms, 5 tokens, last at
// 100 ms: TTFT 50 ms, latency 90 ms, ITL 10 ms, schedule lag 2 ms.
convoy::proto::Record streamed_record() {
  convoy::proto::Record r;
  r.intended_ns = 8 * kMs;
  r.sent_ns = 10 * kMs;
  r.first_token_ns = 60 * kMs;
  r.second_token_ns = 70 * kMs;
  r.last_token_ns = 100 * kMs;
  r.end_ns = 101 * kMs;
  r.output_tokens = 5;
  return r;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

}  // namespace

TEST_CASE("live metrics: a scrape over HTTP shows what the run recorded") {
  LiveMetrics live("127.0.0.1:0", "demo-run");
  REQUIRE(live.port() > 0);
  CHECK(live.url() == "http://127.0.0.1:" + std::to_string(live.port()) + "/metrics");
  auto& w1 = live.worker("w1");
  live.on_record(w1, "", streamed_record());
  live.on_record(w1, "", streamed_record());
  convoy::proto::Record failed = streamed_record();
  failed.error.kind = convoy::proto::ErrorKind::kHttpStatus;
  live.on_record(live.worker("w2"), "ramp", failed);
  convoy::proto::Record warmup = streamed_record();
  warmup.phase = convoy::proto::Phase::kWarmup;
  live.on_record(w1, "", warmup);
  convoy::proto::Record close = streamed_record();
  close.close_request = true;  // final_marker close_request: in no metric
  live.on_record(w1, "", close);
  live.set_requests_in_flight(w1, 7);
  live.on_conversation_started();
  live.on_conversation_finished(convoy::proto::EndReason::kCompleted);
  live.on_conversation_finished("lost");
  live.set_conversations_in_flight(3);
  live.set_workers("running", 2);
  live.set_stage("ramp", "rate", 12.5);

  const auto [status, text] = http_get(live.url());
  REQUIRE(status == 200);
  INFO(text);
  CHECK(has_line(text, R"(convoy_requests_total{outcome="ok",stage="measure",worker="w1"} 2)"));
  CHECK(has_line(text, R"(convoy_requests_total{outcome="ok",stage="warmup",worker="w1"} 1)"));
  CHECK(
      has_line(text, R"(convoy_requests_total{outcome="http_status",stage="ramp",worker="w2"} 1)"));
  CHECK(has_line(text, R"(convoy_requests_in_flight{worker="w1"} 7)"));
  CHECK(has_line(text, R"(convoy_output_tokens_total{stage="measure"} 10)"));
  CHECK(has_line(text, "convoy_conversations_started_total 1"));
  CHECK(has_line(text, R"(convoy_conversations_finished_total{reason="completed"} 1)"));
  CHECK(has_line(text, R"(convoy_conversations_finished_total{reason="lost"} 1)"));
  CHECK(has_line(text, "convoy_conversations_in_flight 3"));
  CHECK(has_line(text, R"(convoy_workers{state="running"} 2)"));
  CHECK(has_line(text, R"(convoy_stage_info{mode="rate",stage="ramp"} 1)"));
  CHECK(has_line(text, R"(convoy_stage_target{mode="rate",stage="ramp"} 12.5)"));
  CHECK(text.find(R"(convoy_run_info{run_id="demo-run",version=")") != std::string::npos);
  // Histograms in seconds: TTFT 50 ms lands in the 0.06 bucket, not the 0.04 one; the failed
  // request has a schedule lag but no latency.
  CHECK(has_line(text, R"(convoy_time_to_first_token_seconds_count{stage="measure"} 2)"));
  CHECK(
      has_line(text, R"(convoy_time_to_first_token_seconds_bucket{stage="measure",le="0.04"} 0)"));
  CHECK(
      has_line(text, R"(convoy_time_to_first_token_seconds_bucket{stage="measure",le="0.06"} 2)"));
  CHECK(has_line(text, R"(convoy_request_latency_seconds_sum{stage="measure"} 0.18)"));
  CHECK(has_line(text, R"(convoy_inter_token_latency_seconds_count{stage="measure"} 2)"));
  CHECK(has_line(text, R"(convoy_schedule_lag_seconds_count{stage="ramp"} 1)"));
  CHECK(has_line(text, R"(convoy_request_latency_seconds_count{stage="ramp"} 0)"));
}

TEST_CASE("live metrics: a new stage replaces the previous stage's info and target") {
  LiveMetrics live("127.0.0.1:0", "stages");
  live.set_stage("base", "concurrency", 8);
  live.set_stage("spike", "rate", 500);
  live.set_stage_target(250);
  const std::string text = live.text();
  INFO(text);
  CHECK(has_line(text, R"(convoy_stage_info{mode="rate",stage="spike"} 1)"));
  CHECK(has_line(text, R"(convoy_stage_target{mode="rate",stage="spike"} 250)"));
  CHECK(text.find(R"(stage="base")") == std::string::npos);
  live.set_stage("trace", "trace", std::nan(""));  // no target level: no target series
  CHECK(live.text().find("convoy_stage_target{") == std::string::npos);
}

TEST_CASE("live metrics: a port in use is a ListenError naming the key and the cause") {
  convoy::test::LoopbackListener busy;
  const std::string listen = "127.0.0.1:" + std::to_string(busy.port());
  std::string what;
  try {
    LiveMetrics live(listen, "busy");
  } catch (const ListenError& e) {
    what = e.what();
  }
  CHECK(what.find("output.metrics_listen " + listen) != std::string::npos);
  CHECK(what.find("another process listens there") != std::string::npos);
  // An address of no interface here.
  what.clear();
  try {
    LiveMetrics live("192.0.2.1:0", "nowhere");
  } catch (const ListenError& e) {
    what = e.what();
  }
  CHECK(what.find("no interface of this host has that address") != std::string::npos);
}

TEST_CASE("live metrics: promtool check metrics accepts the exposition") {
  const fs::path promtool = "/usr/bin/promtool";
  if (!fs::exists(promtool)) {
    MESSAGE("promtool is not installed (Debian package prometheus): skipped");
    return;
  }
  LiveMetrics live("127.0.0.1:0", "promtool");
  auto& w = live.worker("w1");
  live.on_record(w, "", streamed_record());
  live.set_requests_in_flight(w, 1);
  live.on_conversation_started();
  live.on_conversation_finished("failed");
  live.set_conversations_in_flight(1);
  live.set_workers("ready", 1);
  live.set_stage("measure", "concurrency", 4);
  const auto [status, text] = http_get(live.url());
  REQUIRE(status == 200);
  const fs::path file = convoy::test::fresh_path("live-promtool.prom");
  std::ofstream(file) << text;
  const std::string command = promtool.string() + " check metrics < " + file.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status_code = ::pclose(pipe);
  INFO(output);
  INFO(text);
  CHECK(WIFEXITED(status_code));
  CHECK(WEXITSTATUS(status_code) == 0);
}

TEST_CASE("listen exposure: only loopback hosts are quiet") {
  using convoy::live::loopback_host;
  for (const char* host : {"127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"}) {
    CAPTURE(host);
    CHECK(loopback_host(host));
  }
  for (const char* host : {"*", "0.0.0.0", "[::]", "10.0.0.5", "eth0", "lo", "128.0.0.1"}) {
    CAPTURE(host);
    CHECK_FALSE(loopback_host(host));
  }
  CHECK(convoy::live::warn_unless_loopback("output.metrics_listen", "*:9464", "*", ": test"));
  CHECK_FALSE(
      convoy::live::warn_unless_loopback("output.metrics_listen", "127.0.0.1:1", "127.0.0.1", ""));
}
