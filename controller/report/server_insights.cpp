#include "controller/report/server_insights.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "common/histogram.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/server_metrics_view.hpp"

namespace convoy::controller {

namespace {

std::string fixed_digits(double v, int decimals) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

std::string ms(double v) { return fixed_digits(v, v < 10 ? 1 : 0) + " ms"; }
std::string pct(double fraction) { return fixed_digits(fraction * 100, 0) + "%"; }

std::string endpoint_phrase(const ServerSeries& s) {
  return (s.title.empty() ? s.name : s.title) + " (" + s.name + ") on endpoint '" + s.endpoint +
         "'";
}

// Several series of one endpoint summed at each scrape (they share the endpoint's scrape
// times): the total waiting count over the label sets (engines, workers, models).
std::vector<std::pair<double, double>> summed(const std::vector<const ServerSeries*>& series) {
  std::map<int64_t, std::pair<double, double>> by_ms;  // t in ms -> (t_s, sum)
  for (const ServerSeries* s : series) {
    for (const ServerTimePoint& p : s->timeline) {
      if (!p.v) continue;
      auto& slot = by_ms[std::llround(p.t_s * 1000)];
      slot.first = p.t_s;
      slot.second += *p.v;
    }
  }
  std::vector<std::pair<double, double>> out;
  out.reserve(by_ms.size());
  for (const auto& [key, point] : by_ms) out.push_back(point);
  return out;
}

// The value at t, linear between the neighbouring points; nullopt outside the series (allowing
// half a step at either end).
std::optional<double> value_at(const std::vector<std::pair<double, double>>& series, double t) {
  if (series.empty()) return std::nullopt;
  const double step = series.size() > 1 ? (series.back().first - series.front().first) /
                                              static_cast<double>(series.size() - 1)
                                        : 1.0;
  if (t < series.front().first - step / 2 || t > series.back().first + step / 2) {
    return std::nullopt;
  }
  auto after = std::lower_bound(series.begin(), series.end(), std::make_pair(t, -1e300));
  if (after == series.begin()) return series.front().second;
  if (after == series.end()) return series.back().second;
  const auto before = std::prev(after);
  const double span = after->first - before->first;
  if (span <= 0) return after->second;
  return before->second + (after->second - before->second) * (t - before->first) / span;
}

double pearson(const std::vector<std::pair<double, double>>& xy) {
  double mx = 0, my = 0;
  for (const auto& [x, y] : xy) {
    mx += x;
    my += y;
  }
  mx /= static_cast<double>(xy.size());
  my /= static_cast<double>(xy.size());
  double sxy = 0, sxx = 0, syy = 0;
  for (const auto& [x, y] : xy) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
    syy += (y - my) * (y - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

// (server waiting, client TTFT p50 ms) at each client bucket the server's timeline covers.
struct QueueingEvidence {
  size_t points = 0;
  double peak = 0, low_waiting = 0, high_waiting = 0;
  double ttft_low_ms = 0, ttft_high_ms = 0, r = 0;
};

std::optional<QueueingEvidence> queueing_evidence(
    const std::vector<std::pair<double, double>>& waiting,
    const std::vector<std::pair<double, double>>& client) {
  std::vector<std::pair<double, double>> pairs;
  for (const auto& [t, ttft] : client) {
    if (const auto w = value_at(waiting, t)) pairs.emplace_back(*w, ttft);
  }
  if (pairs.size() < kMinQueueingPoints) return std::nullopt;
  QueueingEvidence e;
  e.points = pairs.size();
  std::vector<double> ws;
  ws.reserve(pairs.size());
  for (const auto& [w, ttft] : pairs) ws.push_back(w);
  e.peak = *std::max_element(ws.begin(), ws.end());
  e.low_waiting = sample_percentile(ws, 25);
  e.high_waiting = sample_percentile(ws, 75);
  if (e.peak < kMinQueueingPeak || !(e.high_waiting > e.low_waiting)) return std::nullopt;
  std::vector<double> low, high;
  for (const auto& [w, ttft] : pairs) {
    if (w <= e.low_waiting) low.push_back(ttft);
    if (w >= e.high_waiting) high.push_back(ttft);
  }
  e.ttft_low_ms = sample_percentile(low, 50);
  e.ttft_high_ms = sample_percentile(high, 50);
  e.r = pearson(pairs);
  const bool rose = e.ttft_high_ms >= kQueueingTtftRatio * e.ttft_low_ms &&
                    e.ttft_high_ms - e.ttft_low_ms >= kMinQueueingTtftRiseMs;
  if (!rose || e.r < kMinQueueingCorrelation) return std::nullopt;
  return e;
}

void queueing_insight(const InsightInputs& in, const ServerMetricsView& view,
                      const std::string& endpoint, std::vector<Insight>* out) {
  // One vocabulary: the mock and Dynamo export the same waiting requests under several names.
  const auto series = one_family(view.with_role(endpoint, {"requests_waiting", "queued"}));
  if (series.empty()) return;
  const auto e = queueing_evidence(summed(series), in.client_ttft_p50_over_time);
  if (!e) return;
  const ServerSeries& s = *series.front();
  Insight i;
  i.id = "server_queueing";
  i.severity = "warning";
  i.title = "Requests queue on the server: '" + endpoint + "'";
  i.problem = "The client's TTFT rose while the server's waiting count rose (evidence: " +
              endpoint_phrase(s) + (series.size() > 1 ? ", summed over its label sets" : "") +
              " peaked at " + fixed_digits(e->peak, 0) + "; while it was at or above " +
              fixed_digits(e->high_waiting, 1) + ", the client's TTFT p50 was " +
              ms(e->ttft_high_ms) + ", while at or below " + fixed_digits(e->low_waiting, 1) +
              ", " + ms(e->ttft_low_ms) + "; correlation " + fixed_digits(e->r, 2) + " over " +
              std::to_string(e->points) +
              " time buckets). Time to first token is spent waiting for the engine to admit "
              "the request, not computing it.";
  i.likely_causes = {
      "The offered load is above what the engine runs at once (its batch or KV cache is full).",
      "Too few replicas or workers behind the frontend for this load."};
  i.investigate = {
      "report.html, Server section: queue depth against the client's requests in flight.",
      "summary.json server_metrics: requests running and waiting, KV cache usage."};
  i.fixes = {"Lower the load to where waiting stays near zero (a load.sweep finds the knee).",
             "Add replicas, or raise the engine's concurrent sequences if its KV cache has room."};
  out->push_back(std::move(i));
}

void kv_pressure_insight(const ServerMetricsView& view, const std::string& endpoint,
                         std::vector<Insight>* out) {
  const auto usage = view.with_role(endpoint, {"kv_usage"});
  const auto preemptions = one_family(view.with_role(endpoint, {"preemptions"}));
  if (usage.empty() || preemptions.empty()) return;
  const ServerSeries* top = nullptr;
  double peak = 0;
  for (const ServerSeries* s : usage) {
    const double scale = s->unit == "%" ? 0.01 : 1.0;  // a fraction, unless it says percent
    const double m = s->max.value_or(0) * scale;
    if (top == nullptr || m > peak) {
      top = s;
      peak = m;
    }
  }
  double preempted = 0, rate = 0;
  for (const ServerSeries* s : preemptions) {
    preempted += s->delta.value_or(0);
    rate += s->rate_per_s.value_or(0);
  }
  if (peak < kKvPressureFraction || !(preempted > 0)) return;
  const double scale = top->unit == "%" ? 0.01 : 1.0;
  size_t above = 0;
  for (const ServerTimePoint& p : top->timeline)
    above += p.v && *p.v * scale >= kKvPressureFraction;
  std::string time_above;
  if (!top->timeline.empty()) {
    time_above = ", above 95% in " + std::to_string(above) + " of " +
                 std::to_string(top->timeline.size()) + " points over time";
  }
  Insight i;
  i.id = "kv_cache_pressure";
  i.severity = "warning";
  i.title = "KV cache full, requests preempted: '" + endpoint + "'";
  i.problem = "KV cache usage went above 95% with preemptions increasing (evidence: " +
              endpoint_phrase(*top) + " peaked at " + pct(peak) + ", averaged " +
              pct(top->avg.value_or(0) * scale) + time_above + "; " +
              endpoint_phrase(*preemptions.front()) + " rose by " + fixed_digits(preempted, 0) +
              " (" + fixed_digits(rate, 2) +
              "/s)). A preempted request loses its cache and is recomputed, so its latency "
              "grows and the server's throughput falls.";
  i.likely_causes = {"More concurrent sequences, or longer contexts, than the KV cache holds.",
                     "A cache sized too small (gpu memory utilisation, max model length)."};
  i.investigate = {"report.html, Server section: KV usage over time against queue depth.",
                   "The engine's log for preemption warnings."};
  i.fixes = {"Lower the concurrency or the context lengths of the dataset.",
             "Give the KV cache more memory, or add replicas."};
  out->push_back(std::move(i));
}

// The bucket [low, high] of a cumulative histogram that holds quantile q.
std::pair<double, double> bucket_around(const std::vector<std::pair<double, double>>& buckets,
                                        double q) {
  const double rank = q * buckets.back().second;
  double low = 0;
  for (const auto& [le, n] : buckets) {
    if (n >= rank) return {low, le};
    low = le;
  }
  return {low, buckets.back().first};
}

// The TTFT histogram of one family: the frontend's (dynamo_frontend_*) when it is scraped (it
// times the request from where the client's HTTP ends), else one_family's choice. Adding several
// families would count each request once per family.
std::vector<const ServerSeries*> ttft_family(const ServerMetricsView& view,
                                             const std::string& endpoint) {
  std::vector<const ServerSeries*> hs;
  std::vector<const ServerSeries*> frontend;
  for (const ServerSeries* s : view.with_role(endpoint, {"ttft"})) {
    if (!s->is_histogram() || s->buckets.empty()) continue;
    hs.push_back(s);
    if (s->name.rfind("dynamo_frontend_", 0) == 0) frontend.push_back(s);
  }
  return one_family(frontend.empty() ? hs : frontend);
}

const char* const kOverheadCauses[] = {
    "Network round trips or TLS between convoy and the server.",
    "Frontend work before the engine: tokenisation, routing, queueing there.",
    "A loaded client: compare the workers' CPU % and schedule_lag."};

// Per-request server timing (target.server_timing): the gap measured request by request.
void measured_overhead_insight(const InsightInputs& in, std::vector<Insight>* out) {
  if (!in.ttft_gap || in.ttft_gap->count == 0 || !in.client_ttft_p50_ms) return;
  const double client_ms = *in.client_ttft_p50_ms;
  const double gap_ms = in.ttft_gap->p50_ms;
  const double fraction = client_ms > 0 ? gap_ms / client_ms : 0;
  if (gap_ms < kMinOverheadMs || fraction < kMinOverheadFraction) return;
  Insight i;
  i.id = "client_side_overhead";
  i.severity =
      gap_ms >= kLargeOverheadMs && fraction >= kLargeOverheadFraction ? "warning" : "info";
  i.title = "TTFT outside the server, measured per request";
  i.problem =
      "Each request's TTFT at the client minus the server's own (nvext.timing ttft_ms): "
      "p50 " +
      ms(gap_ms) + " (" + pct(fraction) + " of the client's TTFT p50 " + ms(client_ms) + "), p99 " +
      ms(in.ttft_gap->p99_ms) +
      ", spent in the network, the frontend's HTTP side and the client (evidence: " +
      std::to_string(in.ttft_gap->count) +
      " requests with server timing; summary.json server_timing.ttft_client_minus_server).";
  i.likely_causes.assign(std::begin(kOverheadCauses), std::end(kOverheadCauses));
  i.investigate = {"records.jsonl: server_timing.ttft_gap_ms per request, against sent time.",
                   "summary.json: schedule_lag, the workers' max_cpu_percent."};
  i.fixes = {"Run convoy closer to the server, or add workers if they are busy."};
  out->push_back(std::move(i));
}

// Without per-request timing: the client's TTFT p50 against one histogram family's p50.
void overhead_insight(const InsightInputs& in, const ServerMetricsView& view,
                      const std::string& endpoint, std::vector<Insight>* out) {
  if (in.ttft_gap && in.ttft_gap->count > 0) return;  // measured per request instead
  if (!in.client_ttft_p50_ms || !(*in.client_ttft_p50_ms > 0)) return;
  const std::vector<const ServerSeries*> hs = ttft_family(view, endpoint);
  if (hs.empty()) return;
  const auto buckets = merge_buckets(hs);
  const std::optional<double> server_s = bucket_quantile(buckets, 0.5);
  if (!server_s) return;
  const double to_ms = hs.front()->unit == "ms" ? 1.0 : 1000.0;  // the known ones are in s
  const double server_ms = *server_s * to_ms;
  const double client_ms = *in.client_ttft_p50_ms;
  const double gap_ms = client_ms - server_ms;
  const double fraction = gap_ms / client_ms;
  if (std::fabs(gap_ms) < kMinOverheadMs || std::fabs(fraction) < kMinOverheadFraction) return;
  const auto [low, high] = bucket_around(buckets, 0.5);
  const std::string evidence =
      "(evidence: " + endpoint_phrase(*hs.front()) + "; its p50 lies in the bucket " +
      ms(low * to_ms) + " to " + (std::isinf(high) ? std::string("+Inf") : ms(high * to_ms)) +
      ", " + fixed_digits(buckets.back().second, 0) + " observations in the window)";
  Insight i;
  i.id = "client_side_overhead";
  if (gap_ms < 0) {
    // Not network time: a histogram cannot show the client faster than the server.
    i.severity = "info";
    i.title = "Server TTFT above the client's: '" + endpoint + "'";
    i.problem = "The server's TTFT p50 (" + ms(server_ms) + ") is above the client's (" +
                ms(client_ms) + ") by " + ms(-gap_ms) + " " + evidence +
                ". This is no overhead: the server's buckets are too coarse here, or it counts "
                "requests the client did not (other clients, warmup), or from an earlier point.";
    i.likely_causes = {"Coarse histogram buckets around the p50.",
                       "Other clients of the same server in the scrape window."};
    i.investigate = {"target.server_timing: true measures the gap per request."};
    i.fixes = {"Use target.server_timing for a per-request gap."};
    out->push_back(std::move(i));
    return;
  }
  i.severity =
      gap_ms >= kLargeOverheadMs && fraction >= kLargeOverheadFraction ? "warning" : "info";
  i.title = "TTFT outside the server: '" + endpoint + "'";
  i.problem = "The client's TTFT p50 is " + ms(client_ms) + "; the server's own is " +
              ms(server_ms) + ": a gap of " + ms(gap_ms) + " (" + pct(fraction) +
              " of the client's), spent in the network, the frontend and the client " + evidence +
              ".";
  i.likely_causes.assign(std::begin(kOverheadCauses), std::end(kOverheadCauses));
  i.investigate = {"target.server_timing: true measures the gap per request (Dynamo).",
                   "summary.json: schedule_lag, the workers' max_cpu_percent."};
  i.fixes = {"Run convoy closer to the server, or add workers if they are busy."};
  out->push_back(std::move(i));
}

void failed_endpoint_insight(const ServerEndpointView& e, std::vector<Insight>* out) {
  if (e.scrapes <= 0 || e.errors != e.scrapes) return;
  Insight i;
  i.id = "telemetry_endpoint_failed";
  i.severity = "warning";
  i.title = "Telemetry endpoint '" + e.name + "' failed every scrape";
  i.problem = "Every scrape of " + e.url + " failed (evidence: " + std::to_string(e.errors) +
              " of " + std::to_string(e.scrapes) + " scrapes; last error: " +
              (e.last_error.empty() ? std::string("none recorded") : "\"" + e.last_error + "\"") +
              "). The report has no server figures from it.";
  i.likely_causes = {"A wrong host, port or path in telemetry.endpoints[].url.",
                     "The server does not serve /metrics there, or wants headers (a token).",
                     "The endpoint is slower than telemetry.timeout_s."};
  i.investigate = {"curl -sv " + e.url + " from the controller's host."};
  i.fixes = {"Fix the url (or its headers), raise telemetry.timeout_s, or remove the endpoint."};
  out->push_back(std::move(i));
}

}  // namespace

void add_server_inputs(const MetricsSnapshot& snapshot,
                       std::shared_ptr<const ServerTelemetry> server, InsightInputs* in) {
  in->server = std::move(server);
  if (const MetricStats* ttft = snapshot.find("time_to_first_token"); ttft && ttft->count > 0) {
    in->client_ttft_p50_ms = ttft->p(50);
  }
  if (snapshot.server_timing && snapshot.server_timing->ttft_gap) {
    const MetricStats& gap = *snapshot.server_timing->ttft_gap;
    in->ttft_gap = InsightInputs::TtftGap{gap.p(50), gap.p(99), gap.count};
  }
  const double width = snapshot.client_timeline_bucket_s;
  for (const ClientTimePoint& p : snapshot.client_timeline) {
    if (p.ttft_p50_ms)
      in->client_ttft_p50_over_time.emplace_back(p.start_s + width / 2, *p.ttft_p50_ms);
  }
}

void server_insights(const InsightInputs& in, std::vector<Insight>* out) {
  measured_overhead_insight(in, out);
  if (!in.server || !in.server->view.present) return;
  const ServerMetricsView& view = in.server->view;
  for (const ServerEndpointView& e : view.endpoints) {
    failed_endpoint_insight(e, out);
    queueing_insight(in, view, e.name, out);
    kv_pressure_insight(view, e.name, out);
    overhead_insight(in, view, e.name, out);
  }
}

}  // namespace convoy::controller
