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

#include "common/bucket_quantile.hpp"
#include "controller/report/server_metrics.hpp"
#include "controller/telemetry/cpu_slices.hpp"
#include "controller/telemetry/prom_parser.hpp"
#include "controller/telemetry/window_stats.hpp"

namespace convoy::telemetry {

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

  // summary.json's "server_metrics", typed: every series seen in the window (a histogram's
  // members grouped), each with its window and stage statistics and a headline's timeline;
  // the endpoints' counts and the stages. The report room writes it (docs/telemetry.md).
  controller::ServerMetrics server_metrics(double interval_s) const;

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

// A histogram's percentile from cumulative bucket counts (common/bucket_quantile.hpp, as
// Prometheus' histogram_quantile()), NaN where there is no observation: the JSON writer's null.
inline double bucket_percentile(const std::vector<std::pair<double, double>>& cumulative,
                                double q) {
  return bucket_quantile(cumulative, q).value_or(std::numeric_limits<double>::quiet_NaN());
}

}  // namespace convoy::telemetry
