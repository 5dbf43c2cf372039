// Insights of session routing across Dynamo frontends: conversations that moved between
// workers (from session_routing.verify), one frontend of target.urls failing alone, and the
// frontend's session-affinity rejections, matched on the exact messages of Dynamo's source:
//
//   ai-dynamo/dynamo lib/kv-router/src/services/selection/affinity.rs (the affinity table):
//     MAX_SESSION_AFFINITY_ENTRIES = 65_536, MAX_SESSION_AFFINITY_ID_BYTES = 256;
//     validate_session_id: "session affinity ID must not exceed 256 bytes" (InvalidArgument);
//     reserve_entry: "session affinity entry limit reached" (ResourceExhausted);
//     validate_bound_target / validate_dispatch_target: "session S is bound to worker A, not B",
//     "session S is bound to DP rank A, not B", "session S has worker-only affinity and cannot
//     add DP rank R" (InvalidArgument); explicit_target: "DP rank requires an explicit worker
//     for session affinity". Bindings leave the table only through the idle-TTL reaper.
//   ai-dynamo/dynamo lib/llm/src/http/service/error.rs (HttpProblem::from_dynamo_error):
//     InvalidArgument -> 400 with the message; ResourceExhausted -> overload_status_code()
//     (529 unless DYN_HTTP_OVERLOAD_STATUS_CODE says otherwise) with the public message
//     "Service temporarily overloaded" (older frontends pass the table's own message through).
//   ai-dynamo/dynamo lib/llm/src/protocols/agents.rs: the headers read as session identity.
// What the real frontends answered (tests/dynamo/claims_test.cpp, docs/session-routing.md):
// ai-dynamo 1.6.1 renders every InvalidArgument of the affinity table (an id over 256 bytes, an
// explicit worker or DP rank that disagrees with the binding) as 400 "Invalid request", the detail
// only in its log; and a full table is no error there: it routes without affinity.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "controller/config/config.hpp"
#include "controller/report/insights.hpp"
#include "controller/report/metrics.hpp"

namespace convoy::controller {

namespace {

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f%%", fraction * 100.0);
  return buffer;
}

std::string seconds(int64_t ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", static_cast<double>(ns) / 1e9);
  return buffer;
}

std::string count(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The error groups whose message (lowercased, normalised) contains any needle.
struct Found {
  int64_t count = 0;
  std::vector<std::string> examples;
  const ErrorGroupView* first = nullptr;
};

template <class Predicate>
Found find_groups(const InsightInputs& in, Predicate predicate) {
  Found f;
  for (const auto& g : in.errors) {
    if (g.count <= 0 || !predicate(g, lowered(g.message) + " " + lowered(g.example))) continue;
    f.count += g.count;
    if (f.first == nullptr || g.count > f.first->count) f.first = &g;
    for (const auto& id : g.example_correlation_ids) {
      if (f.examples.size() < kMaxInsightExamples) f.examples.push_back(id);
    }
  }
  return f;
}

bool has(const std::string& text, std::string_view needle) {
  return text.find(needle) != std::string::npos;
}

std::string said(const Found& f) {
  const ErrorGroupView& g = *f.first;
  std::string text = g.example.empty() ? g.message : g.example;
  if (text.size() > 240) text = text.substr(0, 240) + "...";
  std::string out = count(f.count, "request", "requests") + " failed";
  if (g.code != 0) out += " with HTTP " + std::to_string(g.code);
  return out + ": \"" + text + "\".";
}

Insight make(const Found& f, std::string id, std::string severity, std::string title) {
  Insight i;
  i.id = std::move(id);
  i.severity = std::move(severity);
  i.title = std::move(title);
  i.affected_requests = f.count;
  i.example_correlation_ids = f.examples;
  return i;
}

// 1.6.1's bare 400 "Invalid request" (the whole message).
bool invalid_request(const ErrorGroupView& g) {
  std::string m = lowered(g.message);
  while (!m.empty() && (m.back() == '.' || m.back() == ' ')) m.pop_back();
  return g.code == 400 && m == "invalid request";
}

// "Invalid request" with session routing in header mode and no over-long header of ours: the
// two InvalidArgument causes 1.6.1 hides behind it.
void invalid_request_insight(const InsightInputs& in, std::vector<Insight>* out) {
  const bool sessions = in.session_routing_mode == proto::SessionRoutingMode::kHeader ||
                        !in.session_headers_in_target.empty();
  if (!sessions) return;
  const Found found = find_groups(
      in, [](const ErrorGroupView& g, const std::string&) { return invalid_request(g); });
  if (found.first == nullptr) return;
  Insight i = make(found, "affinity_invalid_request", "error",
                   "Dynamo refused the session: HTTP 400 \"Invalid request\"");
  i.problem = said(found) +
              " With session affinity on, ai-dynamo 1.6.1 answers exactly this when its affinity "
              "table refuses a request, and says why only in its log.";
  i.likely_causes = {
      "A session id over 256 bytes (X-Dynamo-Session-ID or an agent's session header).",
      "An explicit worker or DP rank (nvext.backend_instance_id / nvext.dp_rank, or the "
      "x-worker-instance-id / x-dp-rank headers) that disagrees with the worker the session is "
      "bound to."};
  i.investigate = {
      "The frontend's log: a line \"error_type=validation error_detail=invalid request "
      "parameters\" per refused request.",
      "target.headers and target.extra_body for session headers and worker pins."};
  i.fixes = {"Keep session ids at most 256 bytes.",
             "Remove the explicit worker / DP-rank pin, or use session_routing.mode: off when "
             "pinning by hand."};
  out->push_back(std::move(i));
}

void rejection_insights(const InsightInputs& in, std::vector<Insight>* out) {
  const bool long_header = in.longest_target_session_header_bytes > 256;
  const Found too_long = find_groups(in, [&](const ErrorGroupView& g, const std::string& text) {
    return has(text, "session affinity id must not exceed") || (long_header && invalid_request(g));
  });
  if (too_long.first != nullptr) {
    Insight i =
        make(too_long, "session_id_too_long", "error", "Session ids over Dynamo's 256-byte limit");
    i.problem = said(too_long) +
                " Dynamo's session affinity table refuses a session id longer than 256 bytes: "
                "ai-dynamo 1.6.1 answers HTTP 400 \"Invalid request\" (its log says \"invalid "
                "request parameters\"), other versions \"session affinity ID must not exceed 256 "
                "bytes\".";
    if (long_header) {
      i.problem += " target.headers sets a session header of " +
                   std::to_string(in.longest_target_session_header_bytes) + " bytes.";
    }
    i.likely_causes = {
        "target.headers sets the session header (X-Dynamo-Session-ID or an agent's session "
        "header) to a long value.",
        "A JSONL dataset whose ids become session ids of more than 256 bytes."};
    i.investigate = {
        "Look up the example correlation ids in records.jsonl and the headers the "
        "worker sent (the mock's request log shows them)."};
    i.fixes = {
        "Remove the session header from target.headers: convoy sends the correlation id "
        "(36 bytes) in header mode.",
        "Shorten the dataset's conversation ids."};
    out->push_back(std::move(i));
    return;
  }
  invalid_request_insight(in, out);
}

void table_full_insights(const InsightInputs& in, std::vector<Insight>* out) {
  const bool header_mode = in.session_routing_mode == proto::SessionRoutingMode::kHeader;
  const Found full = find_groups(in, [&](const ErrorGroupView&, const std::string& text) {
    return has(text, "session affinity entry limit reached") ||
           (header_mode && has(text, "service temporarily overloaded"));
  });
  if (full.first != nullptr) {
    Insight i = make(full, "affinity_table_full", "error",
                     "Dynamo's session affinity table is full (65,536 bindings)");
    i.problem = said(full) +
                " Each frontend keeps at most 65,536 session bindings (\"session affinity entry "
                "limit reached\"; the frontend answers 529 \"Service temporarily overloaded\" "
                "unless DYN_HTTP_OVERLOAD_STATUS_CODE says otherwise). convoy started " +
                count(in.sessions_started, "session", "sessions") +
                " (leads and sub-agents, each its own session id) in this run.";
    i.likely_causes = {
        "Bindings end only when they sit idle for --router-session-affinity-ttl-secs: a session "
        "that finished still holds its entry until then.",
        "X-Dynamo-Session-Final (session_routing.final_marker) does not free a binding in the "
        "router: it changes nothing here.",
        "More new sessions per TTL than the table holds: load.rate (or concurrency with short "
        "conversations) times the TTL, sub-agents included, exceeds 65,536."};
    if (!header_mode) {
      i.likely_causes.push_back(
          "Another client (or target.headers) sends session headers to the same frontend.");
    }
    i.investigate = {
        "Compare the time of the first rejection (errors over time in report.html) "
        "with sessions started per second times the frontend's TTL."};
    i.fixes = {
        "Lower --router-session-affinity-ttl-secs to a little more than the longest think "
        "time between turns.",
        "Lower load.rate / load.concurrency, or dataset.subagents, so that fewer than "
        "65,536 sessions start within one TTL.",
        "Spread the load over several frontends (target.urls): each has its own table."};
    out->push_back(std::move(i));
  }

  // InvalidArgument: 400 (a 500 "is bound to worker N, which is unavailable" is another story).
}

void pin_conflict_insights(const InsightInputs& in, std::vector<Insight>* out) {
  const Found conflict = find_groups(in, [](const ErrorGroupView& g, const std::string& text) {
    return g.code == 400 && (has(text, "is bound to worker") || has(text, "is bound to dp rank") ||
                             has(text, "has worker-only affinity") ||
                             has(text, "dp rank requires an explicit worker for session affinity"));
  });
  if (conflict.first != nullptr) {
    Insight i = make(conflict, "affinity_pin_conflict", "error",
                     "An explicit worker or DP-rank pin conflicts with the session binding");
    i.problem = said(conflict) +
                " The request named a worker or DP rank explicitly, and the session is already "
                "bound elsewhere (Dynamo checks the pin against the binding, affinity.rs "
                "validate_bound_target).";
    i.likely_causes = {
        "target.extra_body (or the dataset's extras) pins nvext.backend_instance_id / "
        "nvext.dp_rank, while the session header binds the conversation to another worker.",
        "A DP rank pinned without a worker."};
    i.investigate = {"Look at target.extra_body and the example requests in records.jsonl."};
    i.fixes = {
        "Remove the explicit worker / DP-rank pin, or use session_routing.mode: off when "
        "pinning by hand.",
        "Pin the DP rank together with its worker."};
    out->push_back(std::move(i));
  }

  if (!in.session_headers_in_target.empty()) {
    Insight i;
    i.id = "session_header_in_target_headers";
    i.severity = "warning";
    i.title = "target.headers carries a session header";
    std::string names;
    for (const auto& n : in.session_headers_in_target) names += (names.empty() ? "" : ", ") + n;
    i.problem = "target.headers sets " + names +
                ": Dynamo's frontend takes it as the session identity, so every conversation "
                "shares one session id (and one worker).";
    i.likely_causes = {"A header copied from an agent's traffic (Claude Code, Codex, OpenCode)."};
    i.fixes = {
        "Remove it from target.headers; session_routing.mode: header sends a session id "
        "per conversation."};
    out->push_back(std::move(i));
  }
}

// Conversations that moved: the likely causes in the issue's order, those the evidence supports
// first, each with its evidence.
struct Cause {
  bool supported;
  std::string text;
};

Insight not_verified_insight(const AffinitySummary& a) {
  Insight i;
  i.id = "affinity_not_verified";
  i.severity = "warning";
  i.title = "session_routing.verify: the server did not name the serving worker";
  i.problem = count(a.requests_without_worker, "successful request", "successful requests") +
              " asked for nvext.extra_fields [\"worker_id\"] and no reply carried "
              "nvext.worker_id, so affinity could not be checked.";
  i.likely_causes = {"The target is not a Dynamo frontend (vLLM, SGLang served directly).",
                     "A proxy in between drops the nvext member of the reply."};
  i.fixes = {"Point target.url at the Dynamo frontend, or set session_routing.verify: false."};
  return i;
}

Insight moves_insight(const AffinitySummary& a, const std::vector<Cause>& causes) {
  const double fraction = a.move_fraction();
  Insight i;
  i.id = "affinity_moves";
  i.severity = "warning";
  i.title = "Conversations moved between workers";
  i.problem = count(a.conversations_moved, "session", "sessions") + " of " +
              std::to_string(a.conversations) + " moved between workers (" +
              count(a.moves, "move", "moves") + " over " + std::to_string(a.transitions) +
              " consecutive turns, " + percent(fraction) +
              "): a moved turn loses the KV cache of the turns before it.";
  for (const auto& c : causes) i.likely_causes.push_back(c.text);
  i.investigate = {
      "records.jsonl: served_by and dp_rank of each turn, by x_correlation_id (the examples).",
      "The frontend's command line: --router-session-affinity-ttl-secs and "
      "--router-session-affinity-mode."};
  i.fixes = {
      "Start the frontend with --router-session-affinity-ttl-secs longer than the think "
      "time (dataset.think_time_ms), in hard mode.",
      "With several frontends: hash the ingress on X-Dynamo-Session-ID, or list them in "
      "target.urls (convoy pins each family to one)."};
  i.affected_requests = a.moves;
  i.example_correlation_ids = a.example_moved;
  return i;
}

// What the moves look like, for the causes below.
struct MoveEvidence {
  bool after_timeout;  // most moves came after an idle gap longer than session_routing.timeout_s
  bool gaps_separate;  // every move followed a longer idle gap than any turn that stayed
  bool bounces;        // moves mostly went back to a worker the session had used, few workers
  bool gone;           // moved-once sessions away from a worker that served nothing afterwards
  bool unexplained() const { return !after_timeout && !gaps_separate && !bounces && !gone; }
};

MoveEvidence move_evidence(const InsightInputs& in, const AffinitySummary& a) {
  MoveEvidence e{};
  e.after_timeout = a.moves_after_timeout * 2 >= a.moves && a.moves_after_timeout > 0;
  e.gaps_separate = a.min_gap_before_move_ns >= 0 && a.max_gap_before_stay_ns >= 0 &&
                    a.min_gap_before_move_ns > a.max_gap_before_stay_ns;
  e.bounces = in.targets.size() <= 1 && a.moves_back * 2 >= a.moves && a.moves_back > 0 &&
              a.max_workers_per_conversation <= 4;
  e.gone = a.moves_from_gone_worker > 0 && a.moves_from_gone_worker * 2 >= a.conversations_moved;
  return e;
}

// 1. No affinity TTL. A random or round-robin router moves nearly every turn; Dynamo's KV
// router alone keeps a turn on the worker holding its prefix only part of the time (measured
// against the real 1.6.1 frontend with 4 mocker workers and no TTL: 13 of 48 turns moved, 27%,
// none after long gaps, rarely back). So in header mode it is the first cause whenever half the
// turns moved or nothing else explains the moves; soft mode looks the same from the client.
Cause no_ttl_cause(bool header, const MoveEvidence& e, const AffinitySummary& a) {
  const double fraction = a.move_fraction();
  const bool supported = header && (fraction >= 0.5 || e.unexplained());
  std::string text =
      "The frontend runs without --router-session-affinity-ttl-secs, so the header pins "
      "nothing";
  if (!supported) return {false, text + "."};
  text += " (evidence: " + percent(fraction) + " of turns moved, " + std::to_string(a.moves) +
          " of " + std::to_string(a.transitions);
  if (fraction < 0.5) text += ", not after long idle gaps, not back and forth, no worker gone";
  return {true, text + ")."};
}

// The likely causes of moves, in the issue's order, those the evidence supports first.
std::vector<Cause> move_causes(const InsightInputs& in, const AffinitySummary& a) {
  const bool header = in.session_routing_mode == proto::SessionRoutingMode::kHeader;
  const double fraction = a.move_fraction();
  const MoveEvidence e = move_evidence(in, a);
  std::vector<Cause> causes;
  causes.push_back(no_ttl_cause(header, e, a));
  // 2. Think time longer than the TTL / timeout_s: moves come only after the long idle gaps.
  std::string gap_evidence = ".";
  if (e.after_timeout) {
    gap_evidence = " (evidence: " + std::to_string(a.moves_after_timeout) + " of " +
                   std::to_string(a.moves) +
                   " moves came after an idle gap longer than "
                   "session_routing.timeout_s, " +
                   std::to_string(in.timeout_s) + " s).";
  } else if (e.gaps_separate) {
    gap_evidence = " (evidence: every move followed an idle gap of at least " +
                   seconds(a.min_gap_before_move_ns) + ", every turn that stayed one of at most " +
                   seconds(a.max_gap_before_stay_ns) + ").";
  }
  causes.push_back({e.after_timeout || e.gaps_separate,
                    "Think time between turns is longer than the binding lives (the frontend's "
                    "--router-session-affinity-ttl-secs, or session_routing.timeout_s in bind "
                    "and legacy modes)" +
                        gap_evidence});
  // 3. Several frontends behind one address: each has its own table, so a session bounces
  // between the few workers the frontends bound it to.
  causes.push_back(
      {e.bounces,
       "Several frontends behind one address without ingress hashing on the session header: "
       "bindings are local to a frontend" +
           std::string(e.bounces ? " (evidence: " + std::to_string(a.moves_back) + " of " +
                                       std::to_string(a.moves) +
                                       " moves went back to a worker the session had used "
                                       "before, and no session used more than " +
                                       std::to_string(a.max_workers_per_conversation) + " workers)."
                                 : ".")});
  // 4. Soft mode: occasional moves that are none of the above.
  const bool soft = e.unexplained() && fraction < 0.5;
  causes.push_back({soft,
                    "--router-session-affinity-mode soft: the binding is a preference and "
                    "follows wherever the router dispatched" +
                        std::string(soft ? " (evidence: " + percent(fraction) +
                                               " of turns moved, not after long idle gaps and "
                                               "rarely back)."
                                         : ".")});
  // 5. A worker that went away: one move per session, away from a worker that served nothing
  // afterwards.
  causes.push_back(
      {e.gone, "A worker went away and its sessions were bound elsewhere" +
                   std::string(e.gone ? " (evidence: " + std::to_string(a.moves_from_gone_worker) +
                                            " of " + std::to_string(a.conversations_moved) +
                                            " moved sessions moved once, away from a worker that "
                                            "served nothing after the move)."
                                      : ".")});
  std::stable_partition(causes.begin(), causes.end(), [](const Cause& c) { return c.supported; });
  return causes;
}

void affinity_insights(const InsightInputs& in, std::vector<Insight>* out) {
  if (!in.verify || !in.affinity) return;
  const AffinitySummary& a = *in.affinity;
  if (!a.verified) {
    if (a.requests_without_worker > 0) out->push_back(not_verified_insight(a));
    return;
  }
  if (a.moves == 0) return;

  out->push_back(moves_insight(a, move_causes(in, a)));
}

void target_insights(const InsightInputs& in, std::vector<Insight>* out) {
  if (in.targets.size() < 2) return;
  constexpr double kFailing = 0.5;
  constexpr double kHealthy = 0.1;
  constexpr int64_t kMinErrors = 3;
  auto rate = [](const InsightInputs::Target& t) {
    const int64_t total = t.requests + t.errors;
    return total > 0 ? static_cast<double>(t.errors) / static_cast<double>(total) : 0.0;
  };
  const bool any_healthy = std::any_of(in.targets.begin(), in.targets.end(), [&](const auto& t) {
    return t.requests + t.errors > 0 && rate(t) < kHealthy;
  });
  if (!any_healthy) return;
  for (const auto& t : in.targets) {
    if (t.errors < kMinErrors || rate(t) < kFailing) continue;
    Insight i;
    i.id = "target_url_failing";
    i.severity = "error";
    i.title = "One frontend fails alone: " + t.url;
    i.problem = t.url + " failed " + count(t.errors, "request", "requests") + " of " +
                std::to_string(t.requests + t.errors) + " (" + percent(rate(t)) +
                ") while the other target.urls answered.";
    i.likely_causes = {"That frontend (or its router) is down, overloaded or misconfigured.",
                       "It cannot reach the workers (a network or discovery problem)."};
    i.investigate = {"curl -s " + t.url + "/v1/models; the frontend's logs.",
                     "summary.json targets[] and the error groups for that URL."};
    i.fixes = {"Fix or restart that frontend, or remove it from target.urls."};
    i.affected_requests = t.errors;
    out->push_back(std::move(i));
  }
}

}  // namespace

const std::vector<std::string>& dynamo_session_headers() {
  static const std::vector<std::string> names = {"x-dynamo-session-id",
                                                 "x-dynamo-parent-session-id",
                                                 "x-claude-code-session-id",
                                                 "x-claude-code-agent-id",
                                                 "thread-id",
                                                 "x-deepseek-harness-session-id",
                                                 "x-session-id",
                                                 "x-parent-session-id"};
  return names;
}

void add_session_routing_inputs(const Config& config, const MetricsSnapshot& snapshot,
                                InsightInputs* in) {
  in->timeout_s = config.session_routing.timeout_s;
  in->think_time_mean_ms = config.dataset.think_time_ms.mean;
  in->verify = config.session_routing.verify;
  in->affinity = snapshot.affinity;
  in->sessions_started = snapshot.sessions_started;
  for (const auto& t : snapshot.targets) in->targets.push_back({t.url, t.requests, t.errors});
  const auto& known = dynamo_session_headers();
  for (const auto& [name, value] : config.target.headers) {
    if (std::find(known.begin(), known.end(), lowered(name)) != known.end()) {
      in->session_headers_in_target.push_back(name);
      std::string_view v = value;
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      in->longest_target_session_header_bytes =
          std::max(in->longest_target_session_header_bytes, v.size());
    }
  }
}

void session_routing_insights(const InsightInputs& in, std::vector<Insight>* out) {
  rejection_insights(in, out);
  table_full_insights(in, out);
  pin_conflict_insights(in, out);
  affinity_insights(in, out);
  target_insights(in, out);
}

}  // namespace convoy::controller
