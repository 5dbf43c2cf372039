// The live view's text from fixed inputs: the terminal's lines at 80 and 120 columns and the
// plain line for pipes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/run/live_view.hpp"

using convoy::controller::ErrorCount;
using convoy::controller::render_live_view;
using convoy::controller::render_plain_line;
using convoy::controller::ViewBracket;
using convoy::controller::ViewSnapshot;
using convoy::controller::ViewStage;

namespace {

convoy::StageConfig view_stage_config(const std::string& name, int index, double level,
                                      double duration_s) {
  convoy::StageConfig c;
  c.name = name;
  c.index = index;
  c.mode = convoy::LoadMode::kConcurrency;
  c.concurrency = convoy::LoadLevel{level, level, {}, false};
  c.duration_s = duration_s;
  return c;
}

// One minute at concurrency 8, 12.4 s in, two 503s.
ViewSnapshot single_stage_snapshot() {
  ViewSnapshot s;
  s.elapsed_s = 12.4;
  s.run_total_s = 60;
  s.stage = ViewStage{view_stage_config("measure", 0, 8, 60), 1, 0, false, false, 0};
  s.stage_elapsed_s = 12.4;
  s.requests = 90;
  s.conversations_done = 30;
  s.ok = 88;
  s.failed = 2;
  s.in_flight = 8;
  s.window.seconds = 5;
  s.window.requests_per_s = 8.2;
  s.window.output_tokens_per_s = 262.4;
  s.window.ttft_p50_ms = 45.13;
  s.window.ttft_p99_ms = 120.6;
  s.window.itl_p50_ms = 9.84;
  s.window.itl_p99_ms = 15.2;
  s.errors[0] = ErrorCount{convoy::proto::ErrorKind::kHttpStatus, 503, 2};
  return s;
}

// A sweep's second stage of four, 30 s each.
ViewSnapshot sweep_snapshot() {
  ViewSnapshot s = single_stage_snapshot();
  s.stage = ViewStage{view_stage_config("concurrency=8", 1, 8, 30), 4, 0, false, false, 0};
  s.elapsed_s = 42.9;
  s.run_total_s = 120;
  s.conversations_total = 100;
  s.errors[1] = ErrorCount{convoy::proto::ErrorKind::kTimeoutMidStream, 0, 1};
  return s;
}

}  // namespace

TEST_CASE("live view: a single stage at 80 columns") {
  const std::vector<std::string> lines = render_live_view(single_stage_snapshot(), 80);
  const std::vector<std::string> expected = {
      "stage 1/1 measure (concurrency 8)  0:12/1:00, 0:48 left",
      "requests 90: 88 ok, 2 failed  in flight 8  8.2 req/s  262 output tok/s",
      "TTFT p50 45.1 ms p99 121 ms  ITL p50 9.84 ms p99 15.2 ms  (last 5 s)",
      "errors: 2 http 503",
  };
  CHECK(lines == expected);
}

TEST_CASE("live view: a sweep's stage, run time left and errors by kind") {
  SUBCASE("80 columns: what does not fit is left out whole") {
    const std::vector<std::string> lines = render_live_view(sweep_snapshot(), 80);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "stage 2/4 concurrency=8  0:12/0:30, 0:18 left  run 0:42/2:00, 1:18 left");
    CHECK(lines[3] == "errors: 2 http 503, 1 timeout_mid_stream");
    for (const std::string& line : lines) CHECK(line.size() <= 80);
  }
  SUBCASE("120 columns") {
    const std::vector<std::string> lines = render_live_view(sweep_snapshot(), 120);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] ==
          "stage 2/4 concurrency=8  0:12/0:30, 0:18 left  run 0:42/2:00, 1:18 left  "
          "conversations 30/100");
  }
  SUBCASE("40 columns: every line is cut to fit, none wraps") {
    for (const std::string& line : render_live_view(sweep_snapshot(), 40)) {
      CHECK(line.size() <= 40);
    }
  }
}

TEST_CASE("live view: a capacity search shows its step and its bracket") {
  ViewSnapshot s = single_stage_snapshot();
  s.stage = ViewStage{view_stage_config("concurrency=24", 2, 24, 20), 0, 0, false, false, 0};
  s.bracket = ViewBracket{16.0, 32.0};
  s.errors = {};
  const std::vector<std::string> lines = render_live_view(s, 120);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "search step 3 concurrency=24  0:12/0:20, 0:08 left  run 0:12/1:00, 0:48 left");
  CHECK(lines[3] == "search: SLO met at 16, missed at 32");
}

TEST_CASE("live view: a request-bound run, a ramp's level now, a stage settling") {
  ViewSnapshot s = single_stage_snapshot();
  s.stage->config.duration_s.reset();
  s.stage->config.requests = 200;
  s.requests_total = 200;
  std::vector<std::string> lines = render_live_view(s, 80);
  CHECK(lines[0] == "stage 1/1 measure (concurrency 8)  0:12");
  CHECK(lines[1].rfind("requests 90/200: 88 ok, 2 failed", 0) == 0);

  s.stage->config.concurrency = convoy::LoadLevel{4, 12, {}, true};
  s.stage->config.duration_s = 20;
  s.stage_elapsed_s = 10;
  s.stage->settling = false;
  CHECK(render_live_view(s, 80)[0].rfind("stage 1/1 measure (concurrency 8)  0:10/0:20", 0) == 0);
  s.stage->settling = true;
  CHECK(render_live_view(s, 80)[0].find("0:10, settling") != std::string::npos);
}

TEST_CASE("live view: the plain line holds the same facts without escapes") {
  const std::string line = render_plain_line(single_stage_snapshot());
  CHECK(line ==
        "[   12.4s] stage 1/1 measure (concurrency 8) 0:12/1:00, 0:48 left | requests 90: 88 ok, "
        "2 failed | in flight 8 | conversations 30 | 8.2 req/s, 262 output tok/s | TTFT p50 45.1 "
        "ms p99 121 ms | ITL p50 9.84 ms p99 15.2 ms (last 5 s) | errors: 2 http 503");
  CHECK(line.find('\033') == std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("live view: durations and widths") {
  using convoy::controller::clock_text;
  using convoy::controller::fit_width;
  CHECK(clock_text(0) == "0:00");
  CHECK(clock_text(65.9) == "1:05");
  CHECK(clock_text(3600 * 12 + 3) == "12:00:03");
  CHECK(fit_width("abcdef", 4) == "abcd");
  CHECK(fit_width("h\xc3\xa9llo", 2) == "h\xc3\xa9");  // one column per code point
}
