// What `convoy compare` compares: columns (whole runs, or the stages of one run), each holding
// the metric statistics read from a summary.json, and the pure logic over them: the headline
// rows with their relative differences from the baseline (the first column), which direction
// is better per metric and whether a difference is larger than the noise (noise.hpp), the config
// keys that differ, and the throughput-latency curve points. No I/O here (run_loader.hpp reads
// the folders).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/histogram.hpp"
#include "controller/compare/noise.hpp"

namespace convoy::controller::compare {

// Bad input to `convoy compare` (not a run, too few columns): exit 2 with this message.
class CompareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One metric tag of a summary.json: its unit and whichever statistic keys it carries
// (aggregates have only avg; distributions have avg, min, max, p1..p99, std, count, sum).
struct MetricValues {
  std::string unit;
  std::map<std::string, double> stats;  // finite values only
  std::optional<double> get(const std::string& stat) const;
};

// TTFT of one turn group: from records.jsonl one group per turn index (turn 31 and later share
// the last, as in report.html), from summary.json only "0" and "1+" (first and later turns).
struct TurnGroup {
  std::string label;  // "0", "1", ..., "31+", or "1+"
  double p50_ms = NAN;
  double p90_ms = NAN;
  int64_t count = 0;
};

struct Column {
  std::string name;                             // the run folder's name, or the stage's name
  std::string folder;                           // the run folder as given
  std::string stage;                            // the stage's name; empty for a whole run
  std::optional<double> stage_value;            // the stage's load level (sweep/search value)
  std::map<std::string, MetricValues> metrics;  // by tag, plus the derived "error_rate"
  std::map<std::string, std::string> config;    // flattened resolved config (or stage config)
  std::vector<TurnGroup> ttft_by_turn;
  std::string ttft_by_turn_source;  // "records.jsonl", "summary.json" or "" (none)
  // The measured values behind each percentile, from records.jsonl, by metric tag (as value x
  // kSampleScale, noise.hpp): the noise intervals. Empty when the folder has no records.jsonl.
  std::map<std::string, Histogram> samples;
  // A combined summary of load.trials: each headline value's interval over the trials, by tag
  // then statistic ("time_to_first_token" -> "p99"). Empty for a single run.
  std::map<std::string, std::map<std::string, ValueInterval>> trial_intervals;
  // A whole run's stages, in the order they ran (for the curve when comparing sweeps).
  std::vector<Column> stages;

  std::optional<double> value(const std::string& tag, const std::string& stat) const;
};

// The derived metric compare adds to each column: the failed share of measured requests, in %
// (summary.json has no such tag; run_loader.cpp derives it from the request counts).
inline constexpr char kErrorRateTag[] = "error_rate";

enum class Better { kLower, kHigher, kNeither };
const char* to_string(Better b);  // "lower", "higher", "-"

// A row of the side-by-side table: a tag and one statistic.
struct HeadlineDef {
  const char* tag;
  const char* stat;
  Better better;
};
// The rows `convoy compare` shows, in order; a row none of the columns has is left out.
const std::vector<HeadlineDef>& headline_defs();

struct Row {
  std::string tag;
  std::string stat;
  std::string
      name;  // as report.html names the metric, with the statistic: "Time to First Token p99"
  std::string unit;  // from the first column that has it
  Better better = Better::kNeither;
  std::vector<std::optional<double>> values;    // one per column
  std::vector<std::optional<double>> diff_pct;  // vs column 0; the baseline's own is nullopt
  // The samples behind each value: the distribution's count, or the measured requests (successes
  // and failures) for an aggregate; nullopt where the column does not say.
  std::vector<std::optional<int64_t>> counts;
  // Each value's 95% interval: over its trials (a load.trials column), else of the percentile
  // (columns with records.jsonl), else nullopt.
  std::vector<std::optional<ValueInterval>> intervals;
  // Each column's difference judged against the noise; nullopt for the baseline and where there
  // is no difference.
  std::vector<std::optional<NoiseCheck>> noise;
};
std::vector<Row> headline_rows(const std::vector<Column>& columns);

// (value - base) / base * 100; nullopt when either is missing or base is 0.
std::optional<double> relative_diff_pct(std::optional<double> base, std::optional<double> value);
// "+14.6%", "-3.0%", "+0.0%"; "" for nullopt.
std::string diff_text(std::optional<double> pct);
// "better", "worse", "same" (|diff| < 0.05%), or "" when the direction is kNeither or no diff.
std::string judgement(Better better, std::optional<double> pct);
// The same for column i of `row`, noise included: "within noise" where the difference is not
// larger than the noise (row.noise[i]), else as above.
std::string judgement(const Row& row, size_t i);
// The report's human name of a metric tag (report.html's, controller/report/metrics.cpp), or the
// tag itself where the report has none.
std::string metric_name(const std::string& tag);

// A config key whose value differs from the baseline's in at least one column.
struct ConfigDiff {
  std::string key;
  std::vector<std::optional<std::string>> values;  // nullopt: the column does not have the key
};
std::vector<ConfigDiff> config_differences(const std::vector<Column>& columns);

// The throughput-latency curve: one series per line drawn. x is output token throughput
// (tokens/s), or request throughput when no column produced output tokens (embeddings).
struct CurvePoint {
  std::string name;  // the column (run or stage) the point stands for
  double x = 0;
  std::optional<double> ttft_p50_ms;
  std::optional<double> ttft_p99_ms;
};
struct CurveSeries {
  std::string name;  // "all runs", a run's name (its stages), or the run (one run's stages)
  std::vector<CurvePoint> points;
};
struct Curve {
  std::string x_tag;  // "output_token_throughput" or "request_throughput"
  std::string x_unit;
  std::vector<CurveSeries> series;
};
// stages_mode: the columns are one run's stages (points in load order: stage value, then the
// order they ran). Otherwise, when any run has two or more stages, one series per run over its
// stages (a run without stages is a single point); else one series over the runs, by x.
Curve throughput_latency_curve(const std::vector<Column>& columns, bool stages_mode);

}  // namespace convoy::controller::compare
