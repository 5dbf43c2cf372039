// compare.html in a real browser: headless Chromium renders it without a console message, and
// its DOM holds one chart line per column in each latency distribution and the curve's lines.
// Without /usr/bin/chromium (scripts/setup installs it) the test says so and checks nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "controller/compare/compare_output.hpp"
#include "controller/compare/run_loader.hpp"
#include "controller/html_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::controller::compare;
using namespace convoy::test;

namespace {

// The text between `<figure id="ID"` and the next `</figure>`.
std::string figure(const std::string& dom, const std::string& id) {
  const size_t start = dom.find("<figure id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  const size_t end = dom.find("</figure>", start);
  return dom.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string distribution(const char* tag, double p50) {
  std::ostringstream out;
  out << "\"" << tag << "\": {\"unit\": \"ms\", \"avg\": " << p50 << ", \"p1\": " << p50 / 2
      << ", \"p5\": " << p50 / 2 << ", \"p10\": " << p50 * 0.6 << ", \"p25\": " << p50 * 0.8
      << ", \"p50\": " << p50 << ", \"p75\": " << p50 * 1.2 << ", \"p90\": " << p50 * 1.5
      << ", \"p95\": " << p50 * 1.7 << ", \"p99\": " << p50 * 2 << ", \"count\": 10}";
  return out.str();
}

std::string summary(double scale, int concurrency) {
  return "{" + distribution("time_to_first_token", 20 * scale) + ", " +
         distribution("time_to_first_token_first_turn", 15 * scale) + ", " +
         distribution("time_to_first_token_later_turns", 25 * scale) + ", " +
         distribution("inter_token_latency", 5 * scale) + ", " +
         distribution("request_latency", 200 * scale) +
         ", \"output_token_throughput\": {\"unit\": \"tokens/sec\", \"avg\": " +
         std::to_string(300 * scale) +
         "}, \"run\": {\"convoy_version\": \"0.1.0\", \"config_yaml\": \"load:\\n  "
         "concurrency: " +
         std::to_string(concurrency) + "\\n\"}}";
}

}  // namespace

TEST_CASE("compare.html renders in headless Chromium with one line per run") {
  if (chromium_missing()) return;
  const fs::path work = fs::path(CONVOY_BINARY_DIR) / "test-artifacts" / "compare_html";
  fs::remove_all(work);
  std::vector<std::string> folders;
  for (int i = 0; i < 3; ++i) {
    const fs::path dir = work / ("run-" + std::to_string(i));
    fs::create_directories(dir);
    std::ofstream(dir / "summary.json") << summary(1 + i * 0.5, 4 << i);
    folders.push_back(dir.string());
  }
  const fs::path page = work / "compare.html";
  std::ofstream(page) << compare_html(load_comparison(folders));
  const fs::path shot = work / "shot.png";
  const ChromiumRun run =
      render_page(work, page, "1280,2400", shot, work / "dom.html", work / "chromium.log");
  const std::string& dom = run.out;
  CAPTURE(run.log);
  // Each distribution: one polyline per run; the curve over the three runs: p50 and p99.
  for (const char* id :
       {"dist-time_to_first_token", "dist-inter_token_latency", "dist-request_latency"}) {
    CAPTURE(id);
    CHECK(count_of(figure(dom, id), "<polyline") == 3);
  }
  CHECK(count_of(figure(dom, "curve-chart"), "<polyline") == 2);
  CHECK(count_of(figure(dom, "curve-chart"), "<circle") == 6);
  // TTFT by turn: first and later turns for each of the three runs.
  CHECK(count_of(figure(dom, "turns-chart"), "<rect class=\"bar") == 6);
  CHECK(count_of(dom, "class=\"config-row\"") == 1);  // load.concurrency
  CHECK(dom.find("+50.0% worse") != std::string::npos);
  CHECK(console_problems(run.log).empty());
}
