// Error insights: turn what a run saw into problems a person can act on, each
// with likely causes, how to investigate and how to fix it. Pure: a function of a summary of the
// run; the console, summary.json (insights) and report.html show the same list.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "controller/report/affinity.hpp"
#include "controller/report/server_metrics_view.hpp"
#include "proto/messages.hpp"

namespace convoy {
struct Config;
}

namespace convoy::controller {

struct MetricsSnapshot;

// One error group of the run (same shape as the metrics' error_summary): code is the HTTP status
// for http_status errors and 0 otherwise, where type is the error kind ("connect", ...).
struct ErrorGroupView {
  int64_t code = 0;
  std::string type;
  std::string message;
  int64_t count = 0;
  std::vector<std::string> example_correlation_ids;
  std::string example;  // one raw message of the group (message is normalised); quoted to users
};

// What detection looks at. Counts are of measured and warmup requests alike: an insight is about
// the target, not the measurement window.
struct InsightInputs {
  proto::SessionRoutingMode session_routing_mode = proto::SessionRoutingMode::kOff;
  std::string target_url;                    // as configured ("mock" for the bundled mock)
  std::string model;                         // target.model
  bool max_completion_tokens = false;        // target.max_completion_tokens
  std::string api_key_env;                   // target.api_key_env (the NAME)
  bool api_key_present = false;              // that variable was set and non-empty
  std::vector<std::string> models_offered;   // GET /v1/models ids; empty when unknown
  bool connection_refused_at_start = false;  // the target refused connections before any reply

  int64_t total_requests = 0;  // every request that ended, successful or not
  std::vector<ErrorGroupView> errors;

  // Successful requests with turn_index > 0 (they share a prefix with the turn before).
  int64_t later_turn_requests = 0;
  int64_t later_turn_prompt_tokens = 0;              // sum of usage prompt tokens
  int64_t later_turn_cached_tokens = 0;              // sum of usage cached tokens, where reported
  int64_t later_turn_requests_reporting_cached = 0;  // usage carried cached_tokens at all

  // Session routing with Dynamo's session headers; add_session_routing_inputs fills these.
  int64_t timeout_s = 300;                  // session_routing.timeout_s
  double think_time_mean_ms = 0;            // dataset.think_time_ms.mean
  bool verify = false;                      // session_routing.verify
  std::optional<AffinitySummary> affinity;  // with verify
  struct Target {
    std::string url;
    int64_t requests = 0;  // successful
    int64_t errors = 0;
  };
  std::vector<Target> targets;   // target.urls (several frontends); empty with one url
  int64_t sessions_started = 0;  // sessions (leads and sub-agents) that sent their first turn
  // target.headers names Dynamo reads as session identity (its own or an agent's).
  std::vector<std::string> session_headers_in_target;
  size_t longest_target_session_header_bytes = 0;  // the longest value among those, trimmed

  // Server telemetry; add_server_inputs (server_insights.hpp) fills these.
  std::shared_ptr<const ServerTelemetry> server;  // nullptr = no telemetry
  std::optional<double> client_ttft_p50_ms;       // the run's time_to_first_token p50
  // target.server_timing: client TTFT minus the server's, per request (summary.json
  // server_timing.ttft_client_minus_server); nullopt without per-request server timing.
  struct TtftGap {
    double p50_ms = 0;
    double p99_ms = 0;
    int64_t count = 0;  // requests with server timing and a client TTFT
  };
  std::optional<TtftGap> ttft_gap;
  // The client's TTFT p50 per time bucket (by first-token time): (bucket middle in seconds
  // since the measure start, ms), buckets with a TTFT only.
  std::vector<std::pair<double, double>> client_ttft_p50_over_time;
};

struct Insight {
  std::string id;        // stable key, e.g. "session_control_bind_unsupported"
  std::string severity;  // error | warning | info
  std::string title;
  std::string problem;
  std::vector<std::string> likely_causes;
  std::vector<std::string> investigate;
  std::vector<std::string> fixes;
  int64_t affected_requests = 0;                     // requests in the matching error groups
  std::vector<std::string> example_correlation_ids;  // from those groups, at most kMaxExamples
};

inline constexpr size_t kMaxInsightExamples = 3;
// Insight (c) and its header-mode sibling: later turns whose cached share of prompt tokens stays
// below this fraction, over at least kMinLaterTurnsForCacheInsight requests reporting it.
inline constexpr double kNearZeroCacheFraction = 0.05;
inline constexpr int64_t kMinLaterTurnsForCacheInsight = 5;

// Every insight that applies, errors first, then warnings, then info.
std::vector<Insight> detect_insights(const InsightInputs& in);

// Fills the header-era members of `in` from the configuration and the run's metrics.
void add_session_routing_inputs(const Config& config, const MetricsSnapshot& snapshot,
                                InsightInputs* in);

// The session-routing insights (session_routing_insights.cpp); detect_insights calls it.
void session_routing_insights(const InsightInputs& in, std::vector<Insight>* out);

// Headers Dynamo's frontend reads as a session id, lowercase (ai-dynamo/dynamo
// lib/llm/src/protocols/agents.rs, agent_context_header_values / session_affinity_header_value).
const std::vector<std::string>& dynamo_session_headers();

// A JSON array of {id, severity, title, problem, likely_causes, investigate, fixes,
// affected_requests, example_correlation_ids}, for summary.json's "insights".
std::string insights_to_json(const std::vector<Insight>& insights);

// Console panels in a plain-text box, one per insight; nothing when the list is empty. Each box
// is `width` columns wide at most (88; the console's width when narrower, at least 40).
void print_insights(std::ostream& out, const std::vector<Insight>& insights, size_t width = 88);

}  // namespace convoy::controller
