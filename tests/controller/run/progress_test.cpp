// The live view as the run drives it: plain periodic lines off a terminal, frames redrawn in
// place on one (at most four a second), log lines printed above the frame, warmup not counted.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/log.hpp"
#include "controller/run/progress.hpp"
#include "test_time.hpp"

using convoy::controller::Progress;

namespace {

struct Captured {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* file = open_memstream(&data, &size);
  ~Captured() {
    std::fclose(file);
    std::free(data);
  }
  std::string text() {
    std::fflush(file);
    return std::string(data, size);
  }
};

// A measured request that ended at `end_ns`: ok with a 50 ms TTFT and 10 ms ITL over 11
// tokens, or failed with HTTP 503.
struct ProgressRecord {
  convoy::proto::Record record;
  convoy::controller::RequestMetrics metrics;
};
ProgressRecord progress_record(bool ok, int64_t end_ns) {
  ProgressRecord p;
  p.record.end_ns = end_ns;
  if (!ok) {
    p.record.error.kind = convoy::proto::ErrorKind::kHttpStatus;
    p.record.http_status = 503;
    return p;
  }
  p.metrics.ok = true;
  p.metrics.ttft_ns = 50 * kMs;
  p.metrics.itl_ns = 10.0 * kMs;
  p.metrics.osl = 11;
  return p;
}

void feed(Progress& p, bool ok, int64_t end_ns) {
  const ProgressRecord r = progress_record(ok, end_ns);
  p.on_record(r.record, r.metrics, -1);
}

convoy::LoadConfig view_load(int64_t concurrency) {
  convoy::LoadConfig load;
  load.concurrency = concurrency;
  return load;
}

}  // namespace

TEST_CASE("progress: plain periodic lines when stderr is not a terminal") {
  Captured out;
  Progress p(out.file, /*tty=*/false);
  p.begin(0, 10, view_load(8));
  for (int i = 0; i < 8; ++i) feed(p, i != 3, 3 * kS / 2 + i * 100 * kMs);
  p.on_conversation_end(convoy::proto::EndReason::kCompleted);
  p.print(1 * kS, 4, 8);  // too soon for a plain line
  CHECK(out.text().empty());
  p.print(Progress::kPlainPeriodNs, 4, 8);
  std::string text = out.text();
  CHECK(text.find("stage 1/1 measure (concurrency 8)") != std::string::npos);
  CHECK(text.find("conversations 1/10") != std::string::npos);
  CHECK(text.find("requests 8: 7 ok, 1 failed") != std::string::npos);
  CHECK(text.find("in flight 4") != std::string::npos);
  CHECK(text.find("2.0 req/s") != std::string::npos);         // 8 requests in seconds 1 to 5 (4 s)
  CHECK(text.find("TTFT p50 48.2 ms") != std::string::npos);  // 50 ms: its bucket's midpoint
  CHECK(text.find("errors: 1 http 503") != std::string::npos);
  CHECK(text.back() == '\n');
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find('\033') == std::string::npos);
}

TEST_CASE("progress: a terminal view is redrawn in place at most four times a second") {
  Captured out;
  Progress p(out.file, /*tty=*/true, 80);
  convoy::LoadConfig load = view_load(2);
  load.requests = 100;
  p.begin(0, std::nullopt, load);
  feed(p, true, 100 * kMs);
  p.print(kMs, 1, 1);  // the first frame at once
  const std::string first = out.text();
  CHECK(first.rfind("stage 1/1 measure (concurrency 2)", 0) == 0);  // nothing to erase yet
  CHECK(first.find("requests 1/100: 1 ok, 0 failed") != std::string::npos);
  CHECK(first.find("TTFT p50 48.2 ms") != std::string::npos);
  p.print(100 * kMs, 1, 1);  // within 250 ms of the last: not drawn
  CHECK(out.text() == first);
  p.print(300 * kMs, 1, 1);
  const std::string second = out.text().substr(first.size());
  // Up the frame's three lines, erase to the end of the screen, draw again.
  CHECK(second.rfind("\r\033[3A\033[J", 0) == 0);
  for (const char* line : {"stage", "requests"}) {
    CHECK(second.find(line) != std::string::npos);
  }
  p.finish_line();
  const std::string after = out.text();
  p.print(2 * kS, 1, 1);  // a view that finished is not drawn again
  CHECK(out.text() == after);
}

TEST_CASE("progress: a log line prints above the terminal view, never glued to it") {
  Captured out;
  {
    Progress p(out.file, /*tty=*/true, 120);
    p.begin(0, std::nullopt, view_load(4));
    p.print(kMs, 0, 0);
    const size_t before = out.text().size();
    convoy::log_warn("stage 2 started");
    const std::string drawn = out.text().substr(before);
    // The frame is erased, the line printed whole on its own line, the frame drawn below it.
    CHECK(drawn.rfind("\r\033[3A\033[Jconvoy: warning: stage 2 started\nstage 1/1 measure", 0) ==
          0);
    p.finish_line();
    const size_t released = out.text().size();
    convoy::log_warn("after the view");  // to stderr again: not into the view's stream
    CHECK(out.text().size() == released);
  }
}

TEST_CASE("progress: warmup errors are not counted") {
  Captured out;
  Progress p(out.file, false);
  p.begin(0, std::nullopt, convoy::LoadConfig{});
  ProgressRecord warm = progress_record(false, kS);
  warm.record.phase = convoy::proto::Phase::kWarmup;
  p.on_record(warm.record, warm.metrics, -1);
  p.print(Progress::kPlainPeriodNs, 0, 0);
  CHECK(out.text().find("requests 0: 0 ok, 0 failed") != std::string::npos);
  CHECK(out.text().find("errors") == std::string::npos);
}

TEST_CASE("progress: a profile's stages, their requests and a search's bracket") {
  Captured out;
  Progress p(out.file, false);
  convoy::LoadConfig load;
  load.profile = convoy::ProfileKind::kSearch;
  p.begin(0, std::nullopt, load);
  convoy::StageConfig step;
  step.name = "concurrency=16";
  step.index = 1;
  step.concurrency = convoy::LoadLevel{16, 16, {}, false};
  step.requests = 40;
  p.set_stage(step, 0, 2 * kS);
  const ProgressRecord r = progress_record(true, 3 * kS);
  p.on_record(r.record, r.metrics, 1);  // this stage's
  p.on_record(r.record, r.metrics, 0);  // the last stage's late request
  p.set_bracket(8.0, 32.0);
  p.print(Progress::kPlainPeriodNs, 3, 2);
  const std::string text = out.text();
  CHECK(text.find("search step 2 concurrency=16 0:03, requests 1/40") != std::string::npos);
  CHECK(text.find("search: SLO met at 8, missed at 32") != std::string::npos);
  p.stage_ended();
  p.print(2 * Progress::kPlainPeriodNs, 3, 2);
  CHECK(out.text().find("settling") != std::string::npos);
}
