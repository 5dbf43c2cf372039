// Server telemetry's results as the telemetry room hands them to the report: a typed value of
// every series it summarised, each field what summary.json's "server_metrics" writes
// (docs/telemetry.md). The telemetry room computes every figure (the window and stage
// statistics, the histograms' quantiles, the timelines); the report only serialises it
// (server_metrics_json.hpp) and derives the filtered view its Server section, console table and
// insights read (server_metrics_view.hpp). No JSON text crosses between the two rooms.
// Numbers: NaN means "none" (written null), as the telemetry room's statistics have it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace convoy::controller {

// One window's statistics of one metrics[] entry: the measured window's or one stage's. Which
// fields are written depends on the entry's kind (ServerMetricEntry::Kind); NaN: none.
struct ServerMetricStats {
  int64_t samples = 0;  // gauges and counters: scrapes that had the series in the window
  // Gauge-like entries (gauges, untyped series, a summary's quantiles): min .. last. A
  // histogram writes avg, p50 and p99 too (from its buckets).
  double min = 0, avg = 0, p50 = 0, p99 = 0, max = 0, last = 0;
  // Counter-like entries: the increase over the window (resets included), that per second, and
  // how many times the value went down. `last` above is theirs too.
  double delta = 0, rate_per_s = 0;
  int64_t resets = 0;
  // Histograms: observations and their sum in the window, the p90 and p95 beside p50/p99.
  double count = 0, sum = 0, p90 = 0, p95 = 0;
  // Histograms: (le, observations <= le in the window), le ascending (+Inf is infinity).
  std::vector<std::pair<double, double>> buckets;
};

// A headline entry's timeline point: seconds since the window's start, then a gauge's value or a
// counter's rate per second (`a`), or a histogram's p50 (`a`) and p99 (`b`); NaN: none.
struct ServerMetricPoint {
  double t_s = 0;
  double a = 0;
  double b = 0;  // histograms only
};

// One metrics[] entry: a series, or a histogram (its buckets, sum and count of one label set).
struct ServerMetricEntry {
  // Which statistics it has: a gauge's, a counter's or a histogram's.
  enum class Kind { kGauge, kCounter, kHistogram };
  Kind kind = Kind::kGauge;
  std::string endpoint;  // the endpoint's name
  std::string name;      // the sample's name; a histogram's family name
  // As written: gauge | counter | counter_like | histogram | summary_quantile | untyped | the
  // exposition's other types.
  std::string type;
  // Sorted by name; a histogram's without `le`.
  std::vector<std::pair<std::string, std::string>> labels;
  // A known family (headline: true): its title, unit and role; all "" otherwise.
  bool headline = false;
  std::string title;
  std::string unit;
  std::string role;
  ServerMetricStats window;  // over the measured window
  // Headline entries only (others write no timeline): at most the telemetry room's capacity.
  std::vector<ServerMetricPoint> timeline;
  // One per ServerMetrics::stages, by index (empty when the run has no stages).
  std::vector<ServerMetricStats> stages;
};

struct ServerMetricEndpoint {
  std::string name;
  std::string url;
  int64_t scrapes = 0;          // attempted and finished (ok or not)
  int64_t errors = 0;           // failed scrapes
  int64_t dropped_series = 0;   // most series one scrape could not keep (max_series reached)
  int64_t malformed_lines = 0;  // over every scrape
  std::string first_malformed;  // "" when none (written null)
  std::string last_error;       // "" when none (written null)
};

struct ServerMetricStage {
  std::string name;
  int64_t start_ns = 0;           // the run's clock
  std::optional<int64_t> end_ns;  // its settle's start; nullopt: still open at the end
};

// summary.json's "server_metrics", typed. Strings are well-formed UTF-8 (the telemetry room
// replaced what a server sent that was not).
struct ServerMetrics {
  double interval_s = 0;                   // telemetry.interval_s
  std::optional<int64_t> window_start_ns;  // the measured window's start (nullopt: none)
  int64_t window_end_ns = 0;               // the last scrape's start
  std::vector<ServerMetricStage> stages;   // load profile stages, in order
  int64_t series = 0;                      // series kept
  int64_t max_series = 0;                  // telemetry.max_series
  std::vector<ServerMetricEndpoint> endpoints;
  // Series seen in the window, as they first appeared; a histogram's members grouped in one.
  std::vector<ServerMetricEntry> metrics;
};

}  // namespace convoy::controller
