// End to end: output.metrics_linger_s. After the run has written its files, /metrics stays up
// that long with the final counters (a scrape after the last record sees every request), and
// Ctrl-C during the wait ends it at once.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "e2e/http_get.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// A short rate run against the bundled mock, serving /metrics on a free loopback port.
fs::path write_linger_config(const fs::path& dir, double linger_s) {
  fs::create_directories(dir);
  const fs::path path = dir / "convoy.yaml";
  std::ofstream(path) << "name: linger-e2e\n"
                         "seed: 5\n"
                         "target: {url: mock}\n"
                         "mock: {workers: 1, contract: bind, speedup: 20}\n"
                         "dataset:\n"
                         "  type: synthetic\n"
                         "  conversations: 40\n"
                         "  turns: {mean: 1, stddev: 0, min: 1, max: 1}\n"
                         "  input_tokens: {mean: 32, stddev: 0}\n"
                         "  output_tokens: {mean: 4, stddev: 0}\n"
                         "load: {mode: rate, rate: 20, duration_s: 1, grace_s: 5}\n"
                         "workers: {local: 1}\n"
                         "output: {html: false, metrics_listen: \"127.0.0.1:0\", "
                         "metrics_linger_s: "
                      << linger_s << "}\n";
  return path;
}

// The port of "serving live metrics on http://HOST:PORT/metrics" (0: not seen in time).
int linger_port(Subprocess& run) {
  const std::string prefix = "serving live metrics on http://";
  if (!run.wait_for_output(prefix, 60)) return 0;
  const std::string& out = run.output();
  const size_t at = out.find(prefix) + prefix.size();
  const size_t end = out.find("/metrics", at);
  if (end == std::string::npos) return 0;
  const std::string address = out.substr(at, end - at);
  return std::stoi(address.substr(address.rfind(':') + 1));
}

// The sum of every convoy_requests_total sample of a scrape.
double requests_total(const std::string& text) {
  double sum = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("convoy_requests_total{", 0) != 0) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

size_t linger_lines(const fs::path& file) {
  std::ifstream in(file);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

}  // namespace

TEST_CASE("live metrics e2e: output.metrics_linger_s serves the final counters after the run") {
  const fs::path dir = fresh_path("e2e-live-linger");
  const double linger_s = 2;
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", write_linger_config(dir, linger_s).string(),
                  "-o", out.string()});
  const int port = linger_port(run);
  REQUIRE_MESSAGE(port > 0, run.output());
  // The line comes after every output file is written: the run and its records are final.
  REQUIRE_MESSAGE(run.wait_for_output("(output.metrics_linger_s; Ctrl-C ends it)", 60),
                  run.output());
  const auto lingering = std::chrono::steady_clock::now();
  REQUIRE(fs::exists(out / "summary.json"));
  const size_t records = linger_lines(out / "records.jsonl");
  REQUIRE(records > 0);
  // Scrape until the process ends (bounded: linger plus a margin); every answer holds every
  // request of the run.
  int scrapes = 0;
  double last_scrape_s = 0;
  const auto deadline = lingering + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto [status, body] = http_get(port, "/metrics", 1);
    if (status != 200) break;
    ++scrapes;
    last_scrape_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - lingering).count();
    CHECK(requests_total(body) == static_cast<double>(records));
    if (run.wait(0.2)) break;
  }
  const auto rc = run.wait(30);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lingering).count();
  INFO(run.output());
  CHECK(rc == 0);
  CHECK(scrapes >= 2);
  // Seen at most one read poll (50 ms) after the wait began.
  CHECK(elapsed_s >= linger_s - 0.1);
  CHECK(last_scrape_s >= linger_s - 0.7);
}

TEST_CASE("live metrics e2e: output.metrics_linger_s ends at once on Ctrl-C") {
  const fs::path dir = fresh_path("e2e-live-linger-int");
  Subprocess run({bin("controller/convoy"), "run", write_linger_config(dir, 600).string(), "-o",
                  (dir / "out").string()});
  REQUIRE_MESSAGE(run.wait_for_output("(output.metrics_linger_s; Ctrl-C ends it)", 60),
                  run.output());
  const auto sent = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  const auto rc = run.wait(10);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  INFO(run.output());
  CHECK(rc == 0);  // the run itself completed; the signal only ended the wait
  CHECK(took_s < 3);
}
