// summary.json's "server_metrics" bytes for a fixed scrape sequence (server_metrics_sequence.hpp),
// compared with the bytes the code wrote when the telemetry room still handed the report JSON
// text (server_metrics_expected.json, captured from that code): the typed hand-over must write
// the same file.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/summary_writer.hpp"
#include "controller/telemetry/series_store.hpp"
#include "server_metrics_sequence.hpp"

using convoy::telemetry::SeriesStore;

namespace {

// The value of summary.json's "server_metrics" key, as written (pretty, two-space indent).
std::string server_metrics_bytes(const std::string& summary) {
  const std::string key = "\"server_metrics\": ";
  const size_t at = summary.find(key);
  REQUIRE(at != std::string::npos);
  const size_t start = at + key.size();
  int depth = 0;
  bool in_string = false;
  for (size_t i = start; i < summary.size(); ++i) {
    const char c = summary[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return summary.substr(start, i + 1 - start);
  }
  FAIL("server_metrics is not closed");
  return {};
}

std::string summary_of(const SeriesStore& store) {
  convoy::controller::MetricsAggregator agg{convoy::Config{}};
  convoy::controller::SummaryExtras extras;
  extras.server = convoy::controller::make_server_telemetry(store.server_metrics(1.5));
  return convoy::controller::summary_json(agg.snapshot(), extras);
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

TEST_CASE("summary.json's server_metrics bytes are those of the JSON-text hand-over") {
  const std::string path =
      std::string(CONVOY_SOURCE_DIR) + "/tests/controller/telemetry/server_metrics_expected.json";
  const std::string written = server_metrics_bytes(summary_of(convoy::test::fed_store()));
  const std::string expected = read_whole(path);
  CHECK(written.size() == expected.size());
  CHECK(written == expected);
}
