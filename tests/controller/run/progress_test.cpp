#include <doctest/doctest.h>

#include <cstdio>
#include <string>

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

convoy::proto::Record record(bool ok) {
  convoy::proto::Record r;
  if (!ok) r.error.kind = convoy::proto::ErrorKind::kConnect;
  return r;
}

}  // namespace

TEST_CASE("progress: plain periodic lines when stderr is not a terminal") {
  Captured out;
  Progress p(out.file, /*tty=*/false);
  p.begin(0, 10, std::nullopt);
  for (int i = 0; i < 8; ++i) p.on_record(record(i != 3));
  p.on_conversation_end(convoy::proto::EndReason::kCompleted);
  p.print(1 * kS, 4, 8);  // too soon for a plain line
  CHECK(out.text().empty());
  p.print(Progress::kPlainPeriodNs, 4, 8);
  std::string text = out.text();
  CHECK(text.find("conversations 1/10") != std::string::npos);
  CHECK(text.find("requests 8") != std::string::npos);
  CHECK(text.find("errors 1") != std::string::npos);
  CHECK(text.find("in flight 4") != std::string::npos);
  CHECK(text.find("1.6 req/s") != std::string::npos);  // 8 requests over 5 s
  CHECK(text.back() == '\n');
  CHECK(text.find('\r') == std::string::npos);
}

TEST_CASE("progress: a terminal line is redrawn in place") {
  Captured out;
  Progress p(out.file, /*tty=*/true);
  p.begin(0, std::nullopt, 100);
  p.on_record(record(true));
  p.print(kS / 4, 1, 1);
  p.print(kS / 2, 1, 1);
  std::string text = out.text();
  CHECK(text.find("\r\033[K") == 0);
  CHECK(text.find("requests 1/100") != std::string::npos);
  CHECK(text.find('\n') == std::string::npos);
  p.finish_line();
  CHECK(out.text().back() == '\n');
}

TEST_CASE("progress: warmup errors are not counted") {
  Captured out;
  Progress p(out.file, false);
  p.begin(0, std::nullopt, std::nullopt);
  convoy::proto::Record warm = record(false);
  warm.phase = convoy::proto::Phase::kWarmup;
  p.on_record(warm);
  p.print(Progress::kPlainPeriodNs, 0, 0);
  CHECK(out.text().find("requests 0") != std::string::npos);
  CHECK(out.text().find("errors 0") != std::string::npos);
}
