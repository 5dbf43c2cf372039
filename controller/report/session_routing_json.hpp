// summary.json's sections of session routing across frontends: "targets" (one object per
// target.urls entry), "affinity" (session_routing.verify) and run.close_requests; and "models"
// (one object per target.models entry), written the way "targets" is.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <optional>
#include <string>

#include "controller/report/metrics.hpp"

namespace convoy::controller {

// `key`: {unit, avg, min, max, p1..p99, std, count, sum}, or `key`: null without a value.
void write_metric_stats(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key,
                        const std::optional<MetricStats>& m);

// [{index, url, requests, errors, error_rate, time_to_first_token: {unit, avg, min, max, p1..p99,
// std, count, sum}, request_latency: {...}}]; the two metric objects are null without a value.
std::string targets_json(const MetricsSnapshot& snapshot);

// [{name, weight, requests, errors, error_rate, output_tokens, output_token_throughput,
// time_to_first_token: {...}, inter_token_latency: {...}, request_latency: {...}}] (the metric
// objects as in targets_json, null without a value).
std::string models_json(const MetricsSnapshot& snapshot);

// {verified, conversations, conversations_moved, moves, transitions, move_fraction, workers,
// requests_with_worker, requests_without_worker, example_correlation_ids}.
std::string affinity_json(const AffinitySummary& affinity);

// The run object with "close_requests" added (final_marker close_request's extra requests, in no
// metric). Text that is not a JSON object comes back unchanged.
std::string run_json_with_close_requests(const std::string& run_json, int64_t close_requests);

}  // namespace convoy::controller
