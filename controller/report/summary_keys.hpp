// summary.json's key names, defined once: the writer (summary_writer.cpp, run_report.cpp's
// "run" section) writes them and `convoy compare` (compare/run_loader.cpp, comparison.cpp,
// compare_output.cpp) reads them, so that a key renamed on one side cannot silently leave the
// other reading nothing. The metric tags are a table of {tag, unit, kind}: the aggregator's
// MetricDef tables (metrics.cpp) name their tags with these constants and must give the same
// unit and kind (summary_keys_test.cpp checks it).
#pragma once

#include <array>
#include <string_view>

namespace convoy::controller::summary_key {

// ---- top level, in the order written --------------------------------------------------------
inline constexpr char kSchemaVersion[] = "schema_version";
inline constexpr char kConvoyVersion[] = "convoy_version";  // also run.convoy_version
inline constexpr char kBenchmarkId[] = "benchmark_id";
inline constexpr char kStartTime[] = "start_time";
inline constexpr char kEndTime[] = "end_time";
inline constexpr char kWasCancelled[] = "was_cancelled";
// (then one object per metric tag, then error_summary)
inline constexpr char kInsights[] = "insights";
inline constexpr char kRun[] = "run";
inline constexpr char kTargets[] = "targets";
inline constexpr char kModels[] = "models";
inline constexpr char kAffinity[] = "affinity";
inline constexpr char kServerTiming[] = "server_timing";
inline constexpr char kTenants[] = "tenants";
inline constexpr char kPriorities[] = "priorities";
inline constexpr char kWorkers[] = "workers";
inline constexpr char kVerdict[] = "verdict";  // also each stage's
inline constexpr char kOutputErrors[] = "output_errors";
inline constexpr char kStages[] = "stages";
inline constexpr char kSearch[] = "search";
inline constexpr char kServerMetrics[] = "server_metrics";
inline constexpr char kTimeslices[] = "timeslices";

// ---- run ----------------------------------------------------------------------------------
inline constexpr char kConfigYaml[] = "config_yaml";  // the resolved config (config/to_yaml)

// ---- a metric tag's object: {unit, avg} (an aggregate) or every statistic -----------------
inline constexpr char kUnit[] = "unit";
inline constexpr char kAvg[] = "avg";
inline constexpr char kMin[] = "min";
inline constexpr char kMax[] = "max";
inline constexpr char kStd[] = "std";
inline constexpr char kCount[] = "count";
inline constexpr char kSum[] = "sum";
// The percentiles are metrics.hpp's kPercentileKeys ("p1" ... "p99", kReportedPercentiles).
inline constexpr char kP50[] = "p50";
inline constexpr char kP90[] = "p90";
inline constexpr char kP99[] = "p99";

// ---- stages[] and timeslices[] --------------------------------------------------------------
inline constexpr char kName[] = "name";
inline constexpr char kIndex[] = "index";
inline constexpr char kValue[] = "value";  // the stage's load level (sweep / search value)
inline constexpr char kReachedValue[] = "reached_value";
inline constexpr char kStartS[] = "start_s";
inline constexpr char kEndS[] = "end_s";
inline constexpr char kSettleEndS[] = "settle_end_s";
inline constexpr char kConfig[] = "config";  // the stage's load settings

// ---- trials (load.trials): the combined summary.json's "trials" block -----------------------
inline constexpr char kTrials[] = "trials";
inline constexpr char kTrialPlanned[] = "planned";      // load.trials
inline constexpr char kTrialCompleted[] = "completed";  // trials whose values are in the intervals
inline constexpr char kTrialConfidence[] = "confidence";
inline constexpr char kTrialMethod[] = "method";
inline constexpr char kTrialRuns[] = "runs";  // [{trial, seed, folder, exit_code, included}]
inline constexpr char kTrialIndex[] = "trial";
inline constexpr char kTrialSeed[] = "seed";
inline constexpr char kTrialFolder[] = "folder";
inline constexpr char kTrialExitCode[] = "exit_code";
inline constexpr char kTrialIncluded[] = "included";
// intervals: {tag: {stat: {unit, values, n, mean, std, low, high}}}
inline constexpr char kTrialIntervals[] = "intervals";
inline constexpr char kTrialValues[] = "values";
inline constexpr char kTrialN[] = "n";
inline constexpr char kTrialMean[] = "mean";
inline constexpr char kTrialLow[] = "low";
inline constexpr char kTrialHigh[] = "high";

}  // namespace convoy::controller::summary_key

namespace convoy::controller::summary_tag {

// ---- metric tags (AIPerf's names where AIPerf has the metric) -------------------------------
// Distributions: every statistic.
inline constexpr char kTimeToFirstToken[] = "time_to_first_token";
inline constexpr char kTimeToFirstTokenFirstTurn[] = "time_to_first_token_first_turn";
inline constexpr char kTimeToFirstTokenLaterTurns[] = "time_to_first_token_later_turns";
inline constexpr char kTimeToSecondToken[] = "time_to_second_token";
inline constexpr char kInterTokenLatency[] = "inter_token_latency";
inline constexpr char kInterChunkLatency[] = "inter_chunk_latency";
inline constexpr char kRequestLatency[] = "request_latency";
inline constexpr char kCorrectedRequestLatency[] = "corrected_request_latency";
inline constexpr char kScheduleLag[] = "schedule_lag";
inline constexpr char kInputSequenceLength[] = "input_sequence_length";
inline constexpr char kOutputSequenceLength[] = "output_sequence_length";
inline constexpr char kOutputTokenThroughputPerUser[] = "output_token_throughput_per_user";
inline constexpr char kCachedTokens[] = "cached_tokens";
inline constexpr char kPrefixCacheHitRate[] = "prefix_cache_hit_rate";
inline constexpr char kTimeToFirstTokenLead[] = "time_to_first_token_lead";
inline constexpr char kTimeToFirstTokenSubagent[] = "time_to_first_token_subagent";
inline constexpr char kTimeToFirstOutputToken[] = "time_to_first_output_token";
inline constexpr char kReasoningTokenCount[] = "reasoning_token_count";
inline constexpr char kFamilyMakespan[] = "family_makespan";
// Aggregates: {unit, avg} only.
inline constexpr char kOutputTokenThroughput[] = "output_token_throughput";
inline constexpr char kTotalTokenThroughput[] = "total_token_throughput";
inline constexpr char kRequestThroughput[] = "request_throughput";
inline constexpr char kGoodput[] = "goodput";
inline constexpr char kGoodRequestCount[] = "good_request_count";
inline constexpr char kRequestCount[] = "request_count";
inline constexpr char kErrorRequestCount[] = "error_request_count";
inline constexpr char kTotalInputTokens[] = "total_input_tokens";
inline constexpr char kTotalOutputTokens[] = "total_output_tokens";
inline constexpr char kTotalReasoningTokens[] = "total_reasoning_tokens";
inline constexpr char kBenchmarkDuration[] = "benchmark_duration";

// One metric tag of summary.json: its unit as written, and whether it is an aggregate ({unit,
// avg} only) or a distribution (every statistic).
struct SummaryMetric {
  std::string_view tag;
  std::string_view unit;
  bool aggregate = false;
};

inline constexpr std::array<SummaryMetric, 30> kSummaryMetrics{{
    {kTimeToFirstToken, "ms"},
    {kTimeToFirstTokenFirstTurn, "ms"},
    {kTimeToFirstTokenLaterTurns, "ms"},
    {kTimeToSecondToken, "ms"},
    {kInterTokenLatency, "ms"},
    {kInterChunkLatency, "ms"},
    {kRequestLatency, "ms"},
    {kCorrectedRequestLatency, "ms"},
    {kScheduleLag, "ms"},
    {kInputSequenceLength, "tokens"},
    {kOutputSequenceLength, "tokens"},
    {kOutputTokenThroughputPerUser, "tokens/sec/user"},
    {kCachedTokens, "tokens"},
    {kPrefixCacheHitRate, "%"},
    {kTimeToFirstTokenLead, "ms"},
    {kTimeToFirstTokenSubagent, "ms"},
    {kTimeToFirstOutputToken, "ms"},
    {kReasoningTokenCount, "tokens"},
    {kFamilyMakespan, "ms"},
    {kOutputTokenThroughput, "tokens/sec", true},
    {kTotalTokenThroughput, "tokens/sec", true},
    {kRequestThroughput, "requests/sec", true},
    {kGoodput, "requests/sec", true},
    {kGoodRequestCount, "requests", true},
    {kRequestCount, "requests", true},
    {kErrorRequestCount, "requests", true},
    {kTotalInputTokens, "tokens", true},
    {kTotalOutputTokens, "tokens", true},
    {kTotalReasoningTokens, "tokens", true},
    {kBenchmarkDuration, "sec", true},
}};

// The table's entry for `tag`; nullptr when summary.json has no such metric.
constexpr const SummaryMetric* find_summary_metric(std::string_view tag) {
  for (const SummaryMetric& m : kSummaryMetrics) {
    if (m.tag == tag) return &m;
  }
  return nullptr;
}

}  // namespace convoy::controller::summary_tag
