// Metrics over the run: every record folds into histograms and bounded series, so memory never
// grows with the number of requests. Definitions follow AIPerf's (docs/metrics.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/bounded_series.hpp"
#include "common/histogram.hpp"
#include "controller/config/config.hpp"
#include "controller/report/affinity.hpp"
#include "controller/report/client_timeline.hpp"
#include "controller/report/error_groups.hpp"
#include "controller/report/family_makespan.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// What one record measures; nullopt where this request does not have the value. Times are the
// controller's steady clock (the caller already mapped the worker's clock).
struct RequestMetrics {
  bool ok = false;                                      // no error of any kind
  std::optional<int64_t> ttft_ns;                       // first non-empty content - sent
  std::optional<int64_t> ttfo_ns;                       // first non-reasoning content - sent
  std::optional<int64_t> ttst_ns;                       // second content chunk - first
  std::optional<int64_t> request_latency_ns;            // last content chunk (else end) - sent
  std::optional<int64_t> corrected_request_latency_ns;  // end - intended
  std::optional<int64_t> schedule_lag_ns;               // sent - intended (may be negative)
  std::optional<double> itl_ns;                         // (latency - ttft) / (osl - 1)
  std::optional<double> output_tokens_per_s_per_user;   // 1 / itl
  int64_t isl = 0;                                      // input tokens
  int64_t osl = 0;                                      // output tokens (usage when reported)
  std::optional<int64_t> cached_tokens;                 // from usage
  std::optional<int64_t> reasoning_tokens;              // when > 0; at most osl (part of it)
  std::optional<double> prefix_cache_hit_pct;           // cached / isl * 100
};
RequestMetrics compute_request_metrics(const proto::Record& record);

// Metric tags `slo:` may name (values in ms, except output_token_throughput_per_user in
// tokens/sec, which must be met or exceeded; the others must not be exceeded).
bool is_slo_metric(std::string_view tag);
const std::vector<std::string>& slo_metric_tags();

inline constexpr std::array<double, 9> kReportedPercentiles{1, 5, 10, 25, 50, 75, 90, 95, 99};
// Their keys in summary.json and the exports, same order.
inline constexpr std::array<const char*, kReportedPercentiles.size()> kPercentileKeys{
    "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"};

// One metric tag's statistics in its display unit (latencies in ms).
struct MetricStats {
  std::string tag;     // e.g. "time_to_first_token"
  std::string header;  // e.g. "Time to First Token"
  std::string unit;    // e.g. "ms"
  double avg = 0;
  double min = 0;
  double max = 0;
  double std = 0;  // population standard deviation
  double sum = 0;
  int64_t count = 0;
  std::array<double, kReportedPercentiles.size()> percentiles{};  // kReportedPercentiles order
  // A run-level scalar (a throughput, count, total or duration: AIPerf's AGGREGATE / DERIVED
  // metric types), not a distribution: summary.json writes only {unit, avg}, avg = the value.
  // single_value() sets it; the other statistics repeat the value for the console and the csv.
  bool aggregate = false;
  double p(double q) const;  // one of kReportedPercentiles; NaN otherwise
};

// A metric tag's definition: the one table of them (metrics.cpp) serves the whole run's
// statistics and the time slices' alike, so that a slice reads like the summary.
struct MetricDef {
  const char* tag;     // e.g. "time_to_first_token"
  const char* header;  // e.g. "Time to First Token"
  const char* unit;    // display unit, e.g. "ms"
  double scale;        // a raw (histogram) value / scale = the display value; 1 for aggregates
};
// The definition of a distribution (time_to_first_token, ...) or aggregate (request_count, ...)
// tag; null when convoy reports no such metric.
const MetricDef* metric_def(std::string_view tag);
// The aggregate `tag` (metric_def's; std::logic_error if it has none) with the value `value`.
MetricStats single_value(std::string_view tag, double value);

// A distribution's statistics in display units (raw / def.scale), from a histogram of the
// Histogram family (common/histogram.hpp's Histogram or common/sparse_histogram.hpp's), so the
// whole run and its time slices are summarised alike.
template <class H>
MetricStats metric_stats(const H& h, const MetricDef& def) {
  MetricStats s;
  s.tag = def.tag;
  s.header = def.header;
  s.unit = def.unit;
  s.count = h.count();
  s.avg = h.mean() / def.scale;
  s.min = static_cast<double>(h.min()) / def.scale;
  s.max = static_cast<double>(h.max()) / def.scale;
  s.std = h.stddev() / def.scale;
  s.sum = static_cast<double>(h.sum() / static_cast<long double>(def.scale));
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    s.percentiles[i] = static_cast<double>(h.percentile(kReportedPercentiles[i])) / def.scale;
  }
  return s;
}

// One time slice of output.slice_s (summary.json "timeslices", timeslices.csv): the measured
// requests *sent* in [start_s, end_s) since the origin (AIPerf's rule: a record's slice is its
// request start; a request never sent counts at its intended time). Built by
// TimeSliceAggregator (controller/report/timeslice.hpp).
struct TimeSliceStats {
  int64_t index = 0;  // 0, 1, ...: every slice from the first to the last, empty ones included
  double start_s = 0;
  double end_s = 0;
  std::vector<MetricStats> metrics;  // distributions present in it, then its aggregates
};

// One bucket of the over-time series, by completion time.
struct SeriesPoint {
  double start_s = 0;         // since the origin
  int64_t requests = 0;       // successful requests completed
  int64_t errors = 0;         // failed requests ended
  int64_t output_tokens = 0;  // of the successful ones
  std::optional<double> mean_ttft_ms;
};

// A distribution bin in display units (for plots); [low, high).
struct Bin {
  double low = 0;
  double high = 0;
  int64_t count = 0;
};

struct TurnTtft {
  uint32_t turn_index = 0;
  bool and_later = false;  // the last group also holds every later turn
  MetricStats ttft;
};

// One frontend of target.urls (summary.json "targets[]"): every request of the conversation
// families pinned to it.
struct TargetStats {
  uint32_t index = 0;
  std::string url;
  int64_t requests = 0;                        // successful, measured
  int64_t errors = 0;                          // failed, measured
  std::optional<MetricStats> ttft;             // time_to_first_token of its requests
  std::optional<MetricStats> request_latency;  // request_latency of its requests
  double error_rate() const;                   // errors / (requests + errors); 0 when none
};

// summary.json "server_timing" (target.server_timing or session_routing.verify): the server's own
// per-request timing (nvext.timing) and the client-minus-server gaps; built by
// ServerTimingAggregator (controller/report/server_timing.hpp).
struct ServerTimingSummary {
  int64_t requests = 0;                    // successful measured requests with server timing
  int64_t requests_without_timing = 0;     // successful measured requests without it
  std::optional<MetricStats> queue;        // server_queue_time
  std::optional<MetricStats> prefill;      // server_prefill_time
  std::optional<MetricStats> ttft;         // server_time_to_first_token
  std::optional<MetricStats> itl;          // server_inter_token_latency
  std::optional<MetricStats> total;        // server_request_latency
  std::optional<MetricStats> ttft_gap;     // ttft_client_minus_server
  std::optional<MetricStats> latency_gap;  // request_latency_client_minus_server
};

// One request class (summary.json "tenants[]", "priorities[]"): the measured requests of one
// tenant or one agent_hints priority.
struct ClassStats {
  std::string label;     // the tenant's name, or the priority in decimal
  int64_t requests = 0;  // successful, measured
  int64_t errors = 0;    // failed, measured
  std::optional<MetricStats> ttft;
  std::optional<MetricStats> request_latency;
};

// One model of target.models (summary.json "models[]"): every request of the conversations
// that drew it.
struct ModelStats {
  std::string name;
  double weight = 0;                               // as configured (relative)
  int64_t requests = 0;                            // successful, measured
  int64_t errors = 0;                              // failed, measured
  int64_t output_tokens = 0;                       // of its successful requests
  double output_token_throughput = 0;              // output_tokens / the run's duration, tokens/s
  std::optional<MetricStats> ttft;                 // time_to_first_token of its requests
  std::optional<MetricStats> inter_token_latency;  // inter_token_latency of its requests
  std::optional<MetricStats> request_latency;      // request_latency of its requests
  double error_rate() const;                       // errors / (requests + errors); 0 when none
};

struct MetricsSnapshot {
  // Summary order. Distribution metrics appear once they have a value; request_count,
  // error_request_count, request_throughput, output_token_throughput, total_token_throughput,
  // total_input_tokens, total_output_tokens and benchmark_duration always; goodput and
  // good_request_count when slo is set; total_reasoning_tokens when some request reasoned.
  std::vector<MetricStats> metrics;
  const MetricStats* find(std::string_view tag) const;

  int64_t request_count = 0;        // successful, measured
  int64_t error_request_count = 0;  // failed, measured
  int64_t good_request_count = 0;   // successful and within every slo
  bool has_slo = false;
  int64_t warmup_request_count = 0;  // excluded from every metric
  int64_t warmup_error_count = 0;
  int64_t total_input_tokens = 0;      // successful requests
  int64_t total_output_tokens = 0;     // successful requests: OSL, reasoning included
  int64_t total_reasoning_tokens = 0;  // successful requests: the reasoning part of OSL
  int64_t first_send_ns = 0;           // earliest send of a measured request; 0 = none
  int64_t last_end_ns = 0;             // latest end of a measured request
  double duration_s = 0;               // last_end - first_send
  double request_throughput = 0;       // requests/sec
  double output_token_throughput = 0;  // tokens/sec
  double total_token_throughput = 0;   // (input + output tokens) / duration, tokens/sec
  double goodput = 0;                  // requests/sec
  double error_rate() const;           // errors / (requests + errors); 0 when none

  std::vector<ErrorGroup> errors;  // largest count first

  double series_bucket_s = 1;  // grows (doubling) when a run outlasts kMaxSeriesPoints
  std::vector<SeriesPoint> series;
  // report.html's Server section puts the client's side beside the server's: client TTFT
  // p50/p99 by first-token time and requests in flight, in buckets of client_timeline_bucket_s
  // from the same origin.
  double client_timeline_bucket_s = 1;
  std::vector<ClientTimePoint> client_timeline;
  std::vector<TurnTtft> ttft_by_turn;
  // Plot bins for time_to_first_token, inter_token_latency, request_latency (when present).
  std::map<std::string, std::vector<Bin>> distributions;

  // Session routing by header (Dynamo's): final_marker close_request's extra requests: in no
  // metric, counted here only (summary.json run.close_requests).
  int64_t close_request_count = 0;
  // Early releases of sessions whose conversation ended early: in no metric either.
  int64_t early_release_count = 0;
  int64_t sessions_started = 0;      // requests at turn 0 of a lead or sub-agent (measured+warmup)
  std::vector<TargetStats> targets;  // per target.urls entry; empty without target.urls
  std::vector<ModelStats> models;    // per target.models entry; empty without target.models
  std::optional<AffinitySummary> affinity;           // with session_routing.verify
  std::optional<ServerTimingSummary> server_timing;  // target.server_timing or verify
  std::vector<ClassStats> tenants;                   // dataset.tenants; empty without
  std::vector<ClassStats> priorities;                // dataset.agent_hints.priority; empty without

  // output.slice_s: the slices, and their width (slice_s, or a multiple of it once a
  // run outlasts TimeSliceAggregator::kMaxSlices of them); empty / 0 without slice_s.
  std::vector<TimeSliceStats> timeslices;
  double timeslice_s = 0;
};

class TimeSliceAggregator;
class ServerTimingAggregator;
class ClassAggregator;

class MetricsAggregator {
 public:
  static constexpr size_t kMaxSeriesPoints = 86'400;
  static constexpr size_t kMaxTurnGroups = 32;  // turn 31 and later share the last
  static constexpr size_t kMaxErrorGroups = ErrorGroups::kMaxGroups;  // then one "other" group
  static constexpr size_t kErrorExamples = ErrorGroups::kExamples;
  static constexpr size_t kMaxErrorMessageBytes = ErrorGroups::kMaxMessageBytes;
  static constexpr int kDistributionBins = 40;

  explicit MetricsAggregator(const Config& config);
  ~MetricsAggregator();
  MetricsAggregator(MetricsAggregator&&) noexcept;
  MetricsAggregator& operator=(MetricsAggregator&&) noexcept;

  // Time zero of the over-time series (controller steady clock). Default: the first measured
  // record's send time. Call before the first add().
  void set_origin_ns(int64_t origin_ns);

  // Folds one record in. Warmup records only count toward warmup_request_count.
  // `m` is compute_request_metrics(record), computed once by the caller (the record pipeline).
  void add(const proto::Record& record, const RequestMetrics& m);
  void add(const proto::Record& record) { add(record, compute_request_metrics(record)); }

  MetricsSnapshot snapshot() const;

  // Cheap reads for a live progress line.
  int64_t request_count() const { return request_count_; }
  int64_t error_request_count() const { return error_count_; }
  int64_t warmup_request_count() const { return warmup_count_; }
  int64_t output_tokens() const { return total_output_tokens_; }

  // The histogram behind a metric tag (raw units: ns for latencies, tokens, milli-tokens/sec
  // for output_token_throughput_per_user, 1e-4 % for prefix_cache_hit_rate); null if unknown.
  const Histogram* histogram(std::string_view tag) const;

  // Estimated bytes held; bounded whatever the number of records.
  size_t memory_bytes() const;

 private:
  // Parts of snapshot().
  void add_family_makespan(MetricsSnapshot& s) const;
  void fill_over_time(MetricsSnapshot& s) const;
  void fill_routing_metrics(MetricsSnapshot& s) const;
  enum Metric : size_t {
    kTtft,
    kTtftFirstTurn,
    kTtftLaterTurns,
    kTtst,
    kItl,
    kIcl,
    kRequestLatency,
    kCorrectedLatency,
    kScheduleLag,
    kIsl,
    kOsl,
    kPerUser,
    kCachedTokens,
    kHitRate,
    kTtftLead,  // reported only when some sub-agent has a TTFT
    kTtftSubagent,
    kTtfo,             // time_to_first_output_token (reasoning models)
    kReasoningTokens,  // reasoning_token_count, per request that had reasoning
    kMetricCount,
  };
  struct Slo {
    std::string tag;
    double threshold = 0;
  };
  // One point of the over-time series (SeriesPoint), by completion time.
  struct Bucket {
    int64_t requests = 0;  // successful
    int64_t errors = 0;
    int64_t output_tokens = 0;  // of the successful ones
    int64_t ttft_sum_ns = 0;    // over ttft_count requests, for the mean
    int64_t ttft_count = 0;
    Bucket& operator+=(const Bucket& o);  // the series' merge when it coarsens: counters add
  };
  struct TargetAgg {
    int64_t requests = 0;
    int64_t errors = 0;
    Histogram ttft;
    Histogram latency;
  };
  struct ModelAgg {
    int64_t requests = 0;
    int64_t errors = 0;
    int64_t output_tokens = 0;
    Histogram ttft;
    Histogram itl;
    Histogram latency;
  };
  void add_routing_metrics(const proto::Record& record, const RequestMetrics& m);
  void add_model_metrics(const proto::Record& record, const RequestMetrics& m);

  void add_success(const proto::Record& record, const RequestMetrics& m);
  void add_error(const proto::Record& record);
  bool meets_slos(const RequestMetrics& m) const;
  Bucket& series_bucket(int64_t at_ns);

  std::vector<Slo> slos_;
  std::array<Histogram, kMetricCount> histograms_;
  std::vector<Histogram> ttft_by_turn_;
  int64_t request_count_ = 0;
  int64_t error_count_ = 0;
  int64_t good_count_ = 0;
  int64_t warmup_count_ = 0;
  int64_t warmup_error_count_ = 0;
  int64_t total_input_tokens_ = 0;
  int64_t total_output_tokens_ = 0;
  int64_t total_reasoning_tokens_ = 0;
  // false for target.endpoint embeddings: no output_sequence_length.
  bool produces_tokens_ = true;
  int64_t first_send_ns_ = 0;  // 0 = none yet
  int64_t last_end_ns_ = 0;
  std::optional<int64_t> origin_ns_;
  // By completion time since origin_ns_, one-second points to start with.
  BoundedSeries<Bucket> series_{kMaxSeriesPoints, 1'000'000'000};
  ErrorGroups errors_;
  std::vector<std::string> target_urls_;
  std::vector<TargetAgg> targets_;
  std::vector<proto::ModelWeight> model_list_;  // target.models (empty: one model)
  uint64_t seed_ = 0;                           // the run's seed: which model a conversation drew
  std::vector<ModelAgg> models_;                // one per model_list_ entry
  FamilyMakespans families_;
  std::optional<AffinityTracker> affinity_;
  ClientTimeline client_timeline_;  // the Server section's client lines
  int64_t close_request_count_ = 0;
  int64_t early_release_count_ = 0;
  int64_t sessions_started_ = 0;
  std::unique_ptr<TimeSliceAggregator> timeslices_;  // output.slice_s; null without it
  // target.server_timing or session_routing.verify; null otherwise.
  std::unique_ptr<ServerTimingAggregator> server_timing_;
  // dataset.tenants / dataset.agent_hints.priority; null without them.
  std::unique_ptr<ClassAggregator> tenants_;
  std::unique_ptr<ClassAggregator> priorities_;
};

}  // namespace convoy::controller
