// The scraped series and their statistics over the measured window, in bounded memory: at most
// `max_series` series (keyed by endpoint, name and labels; the rest are counted as dropped), and
// per series a fixed-size state whatever the run's length. Pure: it is given samples and their
// times, it reads no clock and does no I/O (the scraper feeds it; tests feed it by hand).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/telemetry/prom_parser.hpp"

namespace convoy::telemetry {

// A gauge's values, for its percentiles: every value while there are at most kCapacity, then
// every 2nd, 4th, ... value (evenly spread over time), so memory stays fixed.
class ValueSample {
 public:
  static constexpr size_t kCapacity = 256;
  void add(double v);
  // Nearest-rank percentile (q in [0, 1]) of the kept values; NaN when empty.
  double percentile(double q) const;
  size_t size() const { return kept_.size(); }

 private:
  std::vector<double> kept_;
  int64_t stride_ = 1;
  int64_t seen_ = 0;
};

// One series: its identity and its state.
struct Series {
  size_t endpoint = 0;
  std::string name;    // the sample name
  std::string family;  // its # TYPE family
  MetricType type = MetricType::kUntyped;
  SampleRole role = SampleRole::kValue;
  std::vector<Label> labels;  // sorted by name

  // Last value seen, in or before the window (the counter baseline at the window's start).
  std::optional<double> last;
  int64_t last_ns = 0;
  // The window: samples from start_window() on.
  std::optional<double> base;  // the value before the window's first sample (nullopt: none)
  int64_t base_ns = 0;
  int64_t samples = 0;  // in the window
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;              // of the window's values (for the gauge average)
  int64_t finite_samples = 0;  // values that were not NaN
  int64_t first_ns = 0;        // first sample in the window
  double increase = 0;         // counters: growth over the window, resets included
  int64_t resets = 0;          // counters: times the value went down
  ValueSample values;          // gauges only

  // Counter-like: counters, histogram buckets/sums/counts, summary sums/counts.
  bool cumulative() const;
};

struct EndpointStats {
  EndpointStats() = default;
  EndpointStats(std::string n, std::string u) : name(std::move(n)), url(std::move(u)) {}
  std::string name;
  std::string url;
  int64_t scrapes = 0;          // attempted and finished (ok or not)
  int64_t errors = 0;           // failed scrapes (connect, timeout, HTTP status, size cap)
  int64_t dropped_series = 0;   // most series one scrape could not keep (max_series reached)
  int64_t malformed_lines = 0;  // over every scrape
  int64_t samples = 0;          // kept, over every scrape
  std::string last_error;       // "" when none
  std::string first_malformed;  // the first malformed line's error, for the report
};

class SeriesStore {
 public:
  SeriesStore(std::vector<EndpointStats> endpoints, int64_t max_series);

  // One scrape of `endpoint` that started at `t_ns`: every sample. Returns the samples kept;
  // `dropped` (when given) gets the number of samples of series that could not be kept.
  int64_t add_scrape(size_t endpoint, int64_t t_ns, const std::vector<Sample>& samples,
                     int64_t malformed, const std::string& first_malformed,
                     int64_t* dropped = nullptr);
  void add_error(size_t endpoint, const std::string& error);

  // The measured window starts: what came before is only each counter's baseline.
  void start_window(int64_t t_ns);
  std::optional<int64_t> window_start_ns() const { return window_start_ns_; }

  // summary.json's "server_metrics": {interval_s, window {start_ns, end_ns}, endpoints [{name,
  // url, scrapes, errors, dropped_series, malformed_lines, last_error}], metrics [...]}.
  std::string summary_json(double interval_s) const;

  const std::vector<EndpointStats>& endpoints() const { return endpoints_; }
  const std::vector<Series>& series() const { return series_; }
  size_t size() const { return series_.size(); }

 private:
  Series* find_or_add(size_t endpoint, const Sample& s, bool* dropped);
  static void add_value(Series& series, double v, int64_t t_ns, bool in_window);

  std::vector<EndpointStats> endpoints_;
  int64_t max_series_;
  std::vector<Series> series_;
  std::unordered_map<std::string, size_t> index_;  // endpoint + name + sorted labels -> series_
  std::optional<int64_t> window_start_ns_;
  int64_t last_scrape_ns_ = 0;
  // Per endpoint, when its last successful scrape started (nullopt: none yet). A counter that
  // first appears after one counted from zero since then (e.g. requests by status, created
  // on the first response), so its first value is part of the delta.
  std::vector<std::optional<int64_t>> last_ok_ns_;
  std::string key_;  // scratch
};

// A histogram's percentile from cumulative bucket counts (upper bound `le`, increasing, the last
// +Inf), as Prometheus' histogram_quantile(): linear within the bucket, 0 as the first bucket's
// lower bound when its bound is positive, the highest finite bound when the rank falls in +Inf.
// NaN when there are no observations.
double bucket_percentile(const std::vector<std::pair<double, double>>& cumulative, double q);

}  // namespace convoy::telemetry
