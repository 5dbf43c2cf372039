#include "controller/report/server_metrics_view.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

namespace convoy::controller {

namespace {

std::optional<double> value(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::string labels_text(const ServerMetricEntry& e) {
  std::string out;
  for (const auto& [name, v] : e.labels) {
    if (!out.empty()) out += ", ";
    out += name;
    out += '=';
    out += v;
  }
  return out;
}

// The statistics summary.json writes for the entry's kind (the others stay nullopt).
void read_stats(const ServerMetricEntry& e, ServerSeries& s) {
  const ServerMetricStats& w = e.window;
  switch (e.kind) {
    case ServerMetricEntry::Kind::kGauge:
      s.min = value(w.min);
      s.avg = value(w.avg);
      s.p50 = value(w.p50);
      s.p99 = value(w.p99);
      s.max = value(w.max);
      s.last = value(w.last);
      break;
    case ServerMetricEntry::Kind::kCounter:
      s.delta = value(w.delta);
      s.rate_per_s = value(w.rate_per_s);
      s.last = value(w.last);
      break;
    case ServerMetricEntry::Kind::kHistogram:
      s.count = value(w.count);
      s.sum = value(w.sum);
      s.avg = value(w.avg);
      s.p50 = value(w.p50);
      s.p99 = value(w.p99);
      for (const auto& [le, n] : w.buckets) {
        // +Inf is a bound; NaN and -Inf are written null, no bound.
        if ((std::isfinite(le) || le > 0) && std::isfinite(n)) s.buckets.emplace_back(le, n);
      }
      std::sort(s.buckets.begin(), s.buckets.end());
      break;
  }
}

ServerSeries series_of(const ServerMetricEntry& e) {
  ServerSeries s;
  s.endpoint = e.endpoint;
  s.name = e.name;
  s.type = e.type;
  s.role = e.role;
  s.title = e.title;
  s.unit = e.unit;
  s.headline = e.headline;
  s.labels = labels_text(e);
  read_stats(e, s);
  const bool histogram = e.kind == ServerMetricEntry::Kind::kHistogram;
  for (const ServerMetricPoint& p : e.timeline) {
    if (!std::isfinite(p.t_s)) continue;
    s.timeline.push_back({p.t_s, value(p.a), histogram ? value(p.b) : std::nullopt});
  }
  return s;
}

}  // namespace

ServerMetricsView view_of(const ServerMetrics& m) {
  ServerMetricsView view;
  view.present = true;
  view.interval_s = std::isfinite(m.interval_s) ? m.interval_s : 0;
  for (const ServerMetricEndpoint& e : m.endpoints) {
    view.endpoints.push_back(
        {e.name, e.url, e.scrapes, e.errors, e.dropped_series, e.last_error, 0});
  }
  for (const ServerMetricEntry& e : m.metrics) {
    if (!e.role.empty() || e.headline) {
      view.metrics.push_back(series_of(e));
      continue;
    }
    for (ServerEndpointView& ep : view.endpoints) {
      if (ep.name == e.endpoint) ++ep.other_series;
    }
  }
  return view;
}

std::vector<const ServerSeries*> ServerMetricsView::with_role(
    std::string_view endpoint, std::initializer_list<std::string_view> roles) const {
  std::vector<const ServerSeries*> out;
  for (const ServerSeries& s : metrics) {
    if (s.endpoint != endpoint) continue;
    if (std::find(roles.begin(), roles.end(), s.role) != roles.end()) out.push_back(&s);
  }
  return out;
}

double ServerMetricsView::timeline_end_s() const {
  double end = 0;
  for (const ServerSeries& s : metrics) {
    for (const ServerTimePoint& p : s.timeline) end = std::max(end, p.t_s);
  }
  return end;
}

std::vector<std::pair<double, double>> merge_buckets(const std::vector<const ServerSeries*>& hs) {
  std::map<double, double> merged;
  for (const ServerSeries* h : hs) {
    for (const auto& [le, n] : h->buckets) merged.emplace(le, 0.0);
  }
  for (const ServerSeries* h : hs) {
    // Cumulative: at a bound it lacks, a histogram has what it has at the bound below.
    size_t i = 0;
    double below = 0;
    for (auto& [le, total] : merged) {
      while (i < h->buckets.size() && h->buckets[i].first <= le) below = h->buckets[i++].second;
      total += below;
    }
  }
  return {merged.begin(), merged.end()};
}

DisplayUnit display_unit(const std::string& unit) {
  if (unit == "s" || unit == "seconds") return {1000, "ms"};
  if (unit == "fraction" || unit == "ratio") return {100, "%"};
  return {1, unit};
}

std::shared_ptr<const ServerTelemetry> make_server_telemetry(ServerMetrics metrics) {
  auto results = std::make_shared<ServerTelemetry>();
  results->view = view_of(metrics);
  results->metrics = std::move(metrics);
  return results;
}

std::string vocabulary_of(const std::string& name) {
  if (const size_t colon = name.find(':'); colon != std::string::npos) return name.substr(0, colon);
  if (name.rfind("convoy_mock_", 0) == 0) return "convoy-mock";
  return name.substr(0, name.find('_'));
}

size_t vocabulary_rank(const std::string& vocabulary) {
  constexpr std::string_view kOrder[] = {"vllm", "sglang", "trtllm",
                                         "DCGM", "dynamo", "convoy-mock"};
  const auto* it = std::find(std::begin(kOrder), std::end(kOrder), vocabulary);
  return static_cast<size_t>(it - std::begin(kOrder));
}

std::vector<const ServerSeries*> one_family(const std::vector<const ServerSeries*>& series) {
  const ServerSeries* best = nullptr;
  for (const ServerSeries* s : series) {
    if (best == nullptr ||
        vocabulary_rank(vocabulary_of(s->name)) < vocabulary_rank(vocabulary_of(best->name))) {
      best = s;
    }
  }
  std::vector<const ServerSeries*> out;
  for (const ServerSeries* s : series) {
    if (best != nullptr && s->name == best->name) out.push_back(s);
  }
  return out;
}

}  // namespace convoy::controller
