// Server telemetry as the report reads it: the entries of summary.json's "server_metrics"
// (ServerMetrics, server_metrics.hpp, from the telemetry room) that report.html's Server
// section, the console's server table and the insights connecting the client's figures with the
// server's read, as plain values. Derived once when telemetry stops (ServerTelemetry below); the
// report never includes telemetry headers. Only the entries with a `role` or `headline: true`
// are kept (the others are counted per endpoint).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bucket_quantile.hpp"
#include "controller/report/server_metrics.hpp"

namespace convoy::controller {

struct ServerTimePoint {
  double t_s = 0;             // since the measure start (the client series' origin)
  std::optional<double> v;    // a gauge's value, a counter's rate per second; a histogram's p50
  std::optional<double> v99;  // a histogram's p99
};

// One entry of server_metrics.metrics[] (NaN-free: absent or null values are nullopt).
struct ServerSeries {
  std::string endpoint;
  std::string name;
  std::string type;  // gauge | counter | counter_like | histogram | summary_quantile | untyped
  std::string role;  // "" when the family is not a known one
  std::string title;
  std::string unit;
  bool headline = false;
  std::string labels;  // "k=v, k2=v2" (sorted as written)
  // Gauges.
  std::optional<double> min, avg, p50, p99, max, last;
  // Counters.
  std::optional<double> delta, rate_per_s;
  // Histograms (p50 and p99 above are theirs too).
  std::optional<double> count, sum;
  std::vector<std::pair<double, double>> buckets;  // (le, observations <= le in the window)
  std::vector<ServerTimePoint> timeline;           // headline entries only
  bool is_histogram() const { return type == "histogram"; }
  bool is_counter() const { return type == "counter" || type == "counter_like"; }
};

struct ServerEndpointView {
  std::string name;
  std::string url;
  int64_t scrapes = 0;
  int64_t errors = 0;
  int64_t dropped_series = 0;
  std::string last_error;
  int64_t other_series = 0;  // entries without a role or headline (not kept here)
};

struct ServerMetricsView {
  bool present = false;  // telemetry ran (view_of sets it)
  double interval_s = 0;
  std::vector<ServerEndpointView> endpoints;
  std::vector<ServerSeries> metrics;

  // The kept entries of one endpoint whose role is one of `roles`.
  std::vector<const ServerSeries*> with_role(std::string_view endpoint,
                                             std::initializer_list<std::string_view> roles) const;
  double timeline_end_s() const;  // the latest t_s of any timeline (0: none)
};

// The entries of `m` the report reads (role or headline), the others counted per endpoint.
ServerMetricsView view_of(const ServerMetrics& m);

// The vocabulary a family belongs to, by its name: "vllm" (vllm:...), "sglang", "trtllm",
// "dynamo", "convoy-mock", "DCGM". One server often exports the same quantity in several (the
// mock speaks vLLM's, Dynamo's and its own), so a chart or a sum takes one of them.
std::string vocabulary_of(const std::string& name);
// Engines' own figures first, then the frontend's, then the mock's own names.
size_t vocabulary_rank(const std::string& vocabulary);
// The series of one family for a quantity: among `series` (one role), those of the family whose
// vocabulary ranks first (then the first written). Adding several families would count the same
// requests once per vocabulary.
std::vector<const ServerSeries*> one_family(const std::vector<const ServerSeries*>& series);

// What the telemetry room hands the run, and the run the report, when telemetry stops: built
// once, shared read-only by every output that reads it.
struct ServerTelemetry {
  // Every series the telemetry room summarised: summary.json writes it all
  // (server_metrics_json.hpp).
  ServerMetrics metrics;
  ServerMetricsView view;  // view_of(metrics): what report.html, the console and insights read
};
// `metrics` and its view, shared.
std::shared_ptr<const ServerTelemetry> make_server_telemetry(ServerMetrics metrics);

// A histogram's percentile from its cumulative buckets: convoy::bucket_quantile
// (common/bucket_quantile.hpp), the telemetry room's own, found here by name lookup.
// The cumulative buckets of several histograms of one family (label sets) added up at every
// `le` any of them has (a histogram without that bound counts what it has at or below it).
std::vector<std::pair<double, double>> merge_buckets(const std::vector<const ServerSeries*>& hs);

// A quantity in the unit's display form: seconds -> ms (`scale` 1000, unit "ms"), a fraction
// -> percent (100, "%"); every other unit as is (1).
struct DisplayUnit {
  double scale = 1;
  std::string unit;
};
DisplayUnit display_unit(const std::string& unit);

}  // namespace convoy::controller
