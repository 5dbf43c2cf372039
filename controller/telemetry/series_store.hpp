// The scraped series and their statistics over the measured window, in bounded memory: at most
// `max_series` series (keyed by endpoint, name and labels; the rest are counted as dropped), and
// per series a fixed-size state whatever the run's length. Pure: it is given samples and their
// times, it reads no clock and does no I/O (the scraper feeds it; tests feed it by hand).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/telemetry/cpu_slices.hpp"
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

// A headline series' values over time in fixed memory: at most kCapacity points. When full,
// neighbouring points are averaged in pairs (the resolution halves) and each later point is the
// average of twice as many scrapes, so the points stay evenly spread over the whole run.
class Timeline {
 public:
  static constexpr size_t kCapacity = 600;
  struct Point {
    double t_s = 0;  // seconds since the window's start
    double a = 0;    // the value (a gauge's, a counter's rate); a histogram's p50
    double b = 0;    // a histogram's p99 (unused otherwise); NaN: no observation
  };
  void add(double t_s, double a, double b = 0);
  // The points, the partly filled last one included (at most kCapacity).
  std::vector<Point> points() const;
  int64_t stride() const { return stride_; }

 private:
  Point pending() const;  // the average of the point being filled (n_ > 0)

  std::vector<Point> points_;
  int64_t stride_ = 1;  // scrapes per point
  // The point being filled: sums and how many finite values each holds.
  double sum_t_ = 0, sum_a_ = 0, sum_b_ = 0;
  int64_t n_ = 0, n_a_ = 0, n_b_ = 0;
};

// One series' statistics over one window (the measured window, or one stage's).
struct WindowStats {
  std::optional<double> base;  // the value before the window's first sample (nullopt: none)
  int64_t base_ns = 0;
  std::optional<double> last;  // the previous value a counter's increase is measured from
  int64_t last_ns = 0;
  int64_t samples = 0;  // in the window
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;              // of the window's values (for the gauge average)
  int64_t finite_samples = 0;  // values that were not NaN
  int64_t first_ns = 0;        // first sample in the window
  double increase = 0;         // counters: growth over the window, resets included
  int64_t resets = 0;          // counters: times the value went down
  ValueSample values;          // gauges only
};

// What summary.json says of a window: a gauge's or a counter's statistics (NaN: none). A
// closed stage keeps only this (fixed size), not its WindowStats.
struct WindowSummary {
  int64_t samples = 0;
  double min = 0, avg = 0, p50 = 0, p99 = 0, max = 0, last = 0;  // gauges
  double delta = 0, rate_per_s = 0;                              // counters (and buckets)
  int64_t resets = 0;
};

struct KnownMetric;

// One series: its identity and its state.
struct Series {
  size_t endpoint = 0;
  std::string name;    // the sample name
  std::string family;  // its # TYPE family
  MetricType type = MetricType::kUntyped;
  SampleRole role = SampleRole::kValue;
  std::vector<Label> labels;  // sorted by name
  // Its known family (headline, title, unit, role); nullptr for others and for `_created`.
  const KnownMetric* known = nullptr;

  // Last value seen, in or before the window (the counter baseline at the window's start).
  std::optional<double> last;
  int64_t last_ns = 0;
  WindowStats window;  // from start_window() on
  // Stages: the one `open` accumulates (-1: none), and each closed stage's summary by stage
  // index (shorter: not seen in the later ones).
  int open_stage = -1;
  WindowStats open;
  std::vector<WindowSummary> closed;
  Timeline timeline;   // headline gauges and counters, in the window
  int histogram = -1;  // a headline histogram's bucket: its HistogramTimeline (-1: none)

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
  // `dropped` (when given) gets the number of samples of series that could not be kept;
  // `slices` (when given) is told of each sample (CpuSlices: the scraper thread yields between
  // slices of its work).
  int64_t add_scrape(size_t endpoint, int64_t t_ns, std::span<const Sample> samples,
                     int64_t malformed, const std::string& first_malformed,
                     int64_t* dropped = nullptr, CpuSlices* slices = nullptr);
  void add_error(size_t endpoint, const std::string& error);

  // The measured window starts: what came before is only each counter's baseline.
  void start_window(int64_t t_ns);
  std::optional<int64_t> window_start_ns() const { return window_start_ns_; }

  // Load profile stages: `name` starts at t_ns (ending an open one), its settle at t_ns (ends
  // its window: settle time is in no stage). A scrape is in the stage its start time is in.
  void mark_stage(std::string name, int64_t t_ns);
  void mark_settle(int64_t t_ns);
  struct StageMark {
    std::string name;
    int64_t start_ns = 0;
    std::optional<int64_t> end_ns;  // its settle's start (nullopt: still open)
  };
  const std::vector<StageMark>& stages() const { return stages_; }
  // Series `s`'s statistics in stage `i`.
  WindowSummary stage_summary(const Series& s, size_t i) const;

  // summary.json's "server_metrics": {interval_s, window {start_ns, end_ns}, stages [{name,
  // start_ns, end_ns}], endpoints [{name, url, scrapes, errors, dropped_series,
  // malformed_lines, last_error}], metrics [...]} (docs/telemetry.md).
  std::string summary_json(double interval_s) const;

  const std::vector<EndpointStats>& endpoints() const { return endpoints_; }
  const std::vector<Series>& series() const { return series_; }
  size_t size() const { return series_.size(); }
  // The series index of each sample of `endpoint`'s last scrape, in order (kNone: dropped).
  static constexpr size_t kNone = static_cast<size_t>(-1);
  const std::vector<size_t>& last_order(size_t endpoint) const { return order_.at(endpoint); }

  // A headline histogram's p50/p99 over time, from the bucket deltas between scrapes.
  struct HistogramTimeline {
    std::vector<std::pair<double, size_t>> buckets;  // le -> series_, by le
    std::vector<double> previous;                    // each bucket's last value (NaN: none)
    int64_t touched_ns = -1;                         // the scrape it was last updated by
    Timeline timeline;
  };
  // The timeline of the histogram group that bucket series `s` belongs to (nullptr: none).
  const Timeline* histogram_timeline(const Series& s) const;

 private:
  Series* find_or_add(size_t endpoint, const Sample& s, bool* dropped);
  void add_value(Series& series, double v, int64_t t_ns, int stage);
  void add_timeline_point(Series& series, double v, int64_t t_ns);
  void link_histogram(Series& series, size_t index);
  void histogram_point(HistogramTimeline& h, int64_t t_ns);
  int stage_at(int64_t t_ns) const;  // -1: in no stage

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
  // Per endpoint, the series of each sample of its previous scrape, in order (kNone: dropped).
  // An exporter writes its series in the same order every time, so sample k is looked for
  // there first: no key to build, no hash lookup (the benchmark's 50,000 series a second).
  std::vector<std::vector<size_t>> order_;
  std::vector<size_t> next_order_;  // scratch
  std::vector<StageMark> stages_;
  std::vector<HistogramTimeline> histograms_;
  std::unordered_map<std::string, size_t> histogram_index_;  // endpoint + family + labels
  std::vector<size_t> touched_;                              // histograms_ in this scrape
  std::string key_;                                          // scratch
};

// A histogram's percentile from cumulative bucket counts (upper bound `le`, increasing, the last
// +Inf), as Prometheus' histogram_quantile(): linear within the bucket, 0 as the first bucket's
// lower bound when its bound is positive, the highest finite bound when the rank falls in +Inf.
// NaN when there are no observations.
double bucket_percentile(const std::vector<std::pair<double, double>>& cumulative, double q);

}  // namespace convoy::telemetry
