#include "controller/report/server_section.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/report/results_table.hpp"
#include "controller/report/server_metrics_view.hpp"
#include "controller/report/svg_chart.hpp"

namespace convoy::controller {

namespace {

using chart::escape;
using chart::Line;
using chart::line_svg;
using chart::LineOptions;
using chart::number;
using Points = std::vector<std::pair<double, double>>;

// The order rows and charts take: what explains a TTFT first.
constexpr std::string_view kRoleOrder[] = {"requests_waiting",
                                           "queued",
                                           "requests_running",
                                           "inflight",
                                           "kv_usage",
                                           "preemptions",
                                           "ttft",
                                           "queue_time",
                                           "itl",
                                           "e2e_latency",
                                           "gpu_util",
                                           "sm_active",
                                           "gr_engine_active",
                                           "fb_used",
                                           "power",
                                           "gpu_temp",
                                           "prompt_tokens",
                                           "generation_tokens",
                                           "prefix_cache_hits",
                                           "prefix_cache_queries",
                                           "cache_hit_rate",
                                           "requests"};

size_t role_rank(const std::string& role) {
  const auto* it = std::find(std::begin(kRoleOrder), std::end(kRoleOrder), role);
  return static_cast<size_t>(it - std::begin(kRoleOrder));
}

// The first of `roles` that the endpoint has, as one family.
std::vector<const ServerSeries*> quantity(const ServerMetricsView& view,
                                          const std::string& endpoint,
                                          std::initializer_list<std::string_view> roles) {
  for (std::string_view role : roles) {
    auto found = one_family(view.with_role(endpoint, {role}));
    if (!found.empty()) return found;
  }
  return {};
}

// Zero (or absent) over the whole run: a gauge that never moved off 0, a counter that did not
// grow, a histogram with no observation.
bool all_zero(const ServerSeries& s) {
  auto zero = [](const std::optional<double>& v) { return !v || *v == 0; };
  for (const ServerTimePoint& p : s.timeline) {
    if (!zero(p.v) || !zero(p.v99)) return false;
  }
  if (s.is_counter()) return zero(s.delta);
  if (s.is_histogram()) return zero(s.count);
  return zero(s.min) && zero(s.max);
}

// Headline entries of one endpoint, in kRoleOrder (then as written).
std::vector<const ServerSeries*> headline_of(const ServerMetricsView& view,
                                             const std::string& endpoint) {
  std::vector<const ServerSeries*> out;
  for (const ServerSeries& s : view.metrics) {
    if (s.endpoint == endpoint && s.headline) out.push_back(&s);
  }
  std::stable_sort(out.begin(), out.end(), [](const ServerSeries* a, const ServerSeries* b) {
    return role_rank(a->role) < role_rank(b->role);
  });
  return out;
}

// Series of one endpoint combined at each scrape time (they share the endpoint's scrapes):
// summed (counts over label sets) or averaged (fractions over GPUs), times `scale`.
Points combined(const std::vector<const ServerSeries*>& series, bool sum, double scale) {
  std::map<int64_t, std::pair<double, std::pair<double, int>>> by_ms;
  for (const ServerSeries* s : series) {
    const double unit_scale = s->unit == "fraction" || s->unit == "ratio" ? 100.0 : 1.0;
    for (const ServerTimePoint& p : s->timeline) {
      if (!p.v) continue;
      auto& slot = by_ms[std::llround(p.t_s * 1000)];
      slot.first = p.t_s;
      slot.second.first += *p.v * (scale == 0 ? unit_scale : scale);
      ++slot.second.second;
    }
  }
  Points out;
  for (const auto& [key, slot] : by_ms) {
    const auto [total, n] = slot.second;
    out.emplace_back(slot.first, sum ? total : total / n);
  }
  return out;
}

struct ClientLines {
  Line ttft50{"client TTFT p50", "s1", {}};
  Line ttft99{"client TTFT p99", "s2", {}};
  Line in_flight{"client requests in flight", "s1", {}};
};

ClientLines client_lines(const MetricsSnapshot& s) {
  ClientLines c;
  const double width = s.client_timeline_bucket_s > 0 ? s.client_timeline_bucket_s : 1;
  for (const ClientTimePoint& p : s.client_timeline) {
    const double x = p.start_s + width / 2;
    if (p.ttft_p50_ms) c.ttft50.points.emplace_back(x, *p.ttft_p50_ms);
    if (p.ttft_p99_ms) c.ttft99.points.emplace_back(x, *p.ttft_p99_ms);
    c.in_flight.points.emplace_back(x, p.in_flight);
  }
  return c;
}

LineOptions axis_options(const MetricsSnapshot& s, const SummaryExtras& extras) {
  LineOptions o;
  for (const StageFacts& st : extras.stages) {
    o.markers.push_back(
        {static_cast<double>(st.start_ns - extras.measure_start_ns) / 1e9, st.config.name});
  }
  o.x_max = server_axis_end_s(s, extras);
  return o;
}

// A chart of the lines that have points (the others are left out, of the legend too); false
// and nothing drawn when none has.
bool figure(std::ostringstream& out, const std::string& caption, const std::vector<Line>& lines,
            const std::string& y_label, const LineOptions& options, const std::string& note = {}) {
  std::vector<Line> kept;
  for (const Line& l : lines) {
    if (!l.points.empty()) kept.push_back(l);
  }
  if (kept.empty()) return false;
  out << "<figure><figcaption>" << escape(caption);
  if (!note.empty()) out << " <span class=\"muted\">" << escape(note) << "</span>";
  out << "</figcaption>" << line_svg(kept, caption, y_label, "seconds", options) << "</figure>";
  return true;
}

Line line_of(std::string name, const char* css, Points points) {
  return Line{std::move(name), css, std::move(points)};
}

// The series' names, each once: "from a, b".
std::string names_of(const std::vector<const ServerSeries*>& series) {
  std::vector<std::string> names;
  for (const ServerSeries* s : series) {
    if (std::find(names.begin(), names.end(), s->name) == names.end()) names.push_back(s->name);
  }
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "from " : ", ") + n;
  return out;
}

// The charts of one endpoint; returns how many it drew.
int endpoint_charts(std::ostringstream& out, const ServerMetricsView& view,
                    const std::string& endpoint, const ClientLines& client,
                    const LineOptions& options) {
  int drawn = 0;
  auto draw = [&](const std::string& caption, const std::vector<Line>& lines, const char* y,
                  const std::string& note) {
    if (figure(out, caption, lines, y, options, note)) ++drawn;
  };
  const auto waiting = quantity(view, endpoint, {"requests_waiting", "queued"});
  const auto running = quantity(view, endpoint, {"requests_running", "inflight"});
  const Line w = line_of("server waiting", "s2", combined(waiting, true, 1));
  const Line r = line_of("server running", "s3", combined(running, true, 1));
  if (!w.points.empty() || !r.points.empty()) {
    std::vector<const ServerSeries*> both = waiting;
    both.insert(both.end(), running.begin(), running.end());
    draw("Queue depth and requests in flight", {client.in_flight, w, r}, "requests",
         names_of(both));
  }
  const ServerSeries* ttft = nullptr;
  for (const ServerSeries* s : view.with_role(endpoint, {"ttft"})) {
    if (!s->is_histogram() || s->timeline.empty()) continue;
    if (ttft == nullptr || s->count.value_or(0) > ttft->count.value_or(0)) ttft = s;
  }
  if (ttft != nullptr) {
    const double to_ms = ttft->unit == "ms" ? 1.0 : 1000.0;
    Line p50 = line_of("server TTFT p50", "s3", {});
    Line p99 = line_of("server TTFT p99", "s4", {});
    for (const ServerTimePoint& p : ttft->timeline) {
      if (p.v) p50.points.emplace_back(p.t_s, *p.v * to_ms);
      if (p.v99) p99.points.emplace_back(p.t_s, *p.v99 * to_ms);
    }
    draw("Time to first token: client and server", {client.ttft50, client.ttft99, p50, p99}, "ms",
         names_of({ttft}));
  }
  const auto kv = one_family(view.with_role(endpoint, {"kv_usage"}));
  if (!kv.empty()) {
    // A fraction (0 to 1) is drawn as percent (combined's unit scale), so the axis reads 0-100.
    draw("KV cache usage", {line_of("KV cache usage", "s1", combined(kv, false, 0))},
         "% of KV cache used", names_of(kv) + (kv.size() > 1 ? " (mean)" : ""));
  }
  const auto gpu = view.with_role(endpoint, {"gpu_util"});
  const auto sm = view.with_role(endpoint, {"sm_active"});
  if (!gpu.empty() || !sm.empty()) {
    std::vector<const ServerSeries*> both = gpu;
    both.insert(both.end(), sm.begin(), sm.end());
    draw("GPU utilisation",
         {line_of("GPU utilisation", "s1", combined(gpu, false, 1)),
          line_of("SM active", "s2", combined(sm, false, 0))},
         "%",
         names_of(both) + " (mean over " + std::to_string(std::max(gpu.size(), sm.size())) +
             " series)");
  }
  return drawn;
}

std::string cell(const std::optional<double>& v, double scale = 1) {
  return v ? number(*v * scale) : "-";
}

void headline_table(std::ostringstream& out, const std::vector<const ServerSeries*>& rows) {
  if (rows.empty()) return;
  out << "<table class=\"server-table\"><thead><tr><th class=\"text\">metric</th>"
         "<th class=\"text\">labels</th><th>avg</th><th>p50</th><th>p99</th><th>max</th>"
         "<th>rate/s</th><th>total</th><th class=\"text\">unit</th></tr></thead><tbody>";
  for (const ServerSeries* s : rows) {
    const DisplayUnit u = s->is_counter() ? DisplayUnit{1, s->unit} : display_unit(s->unit);
    out << "<tr class=\"server-row\"><td class=\"text\" title=\"" << escape(s->name) << "\">"
        << escape(s->title.empty() ? s->name : s->title) << "</td><td class=\"text\">"
        << escape(s->labels) << "</td>";
    if (s->is_counter()) {
      out << "<td colspan=\"4\"></td><td>" << cell(s->rate_per_s) << "</td><td>" << cell(s->delta)
          << "</td>";
    } else {
      out << "<td>" << cell(s->avg, u.scale) << "</td><td>" << cell(s->p50, u.scale) << "</td><td>"
          << cell(s->p99, u.scale) << "</td><td>" << cell(s->max, u.scale) << "</td><td>-</td><td>"
          << (s->is_histogram() ? cell(s->count) : "-") << "</td>";
    }
    out << "<td class=\"text\">" << escape(u.unit) << "</td></tr>";
  }
  out << "</tbody></table>";
}

// How an endpoint's headline series are split for the page and the console: the series that
// stayed 0 are only counted, each quantity is shown in one vocabulary, and a family's label sets
// (one per worker, engine or GPU) are detail.
struct ServerRows {
  std::vector<const ServerSeries*> single;      // the shown family has one label set
  std::vector<const ServerSeries*> per_labels;  // the shown family has several
  std::vector<const ServerSeries*> other_vocabularies;
  std::vector<std::string> zero_families;  // every label set 0 the whole run, each name once
  size_t zero_series = 0;
};

ServerRows split_rows(const std::vector<const ServerSeries*>& rows) {
  ServerRows out;
  std::vector<const ServerSeries*> moving;
  for (const ServerSeries* s : rows) {
    if (!all_zero(*s)) {
      moving.push_back(s);
      continue;
    }
    ++out.zero_series;
    if (std::find(out.zero_families.begin(), out.zero_families.end(), s->name) ==
        out.zero_families.end()) {
      out.zero_families.push_back(s->name);
    }
  }
  for (const ServerSeries* s : moving) {
    std::vector<const ServerSeries*> same_role;
    for (const ServerSeries* t : moving) {
      if (t->role == s->role) same_role.push_back(t);
    }
    const auto family = one_family(same_role);
    if (family.empty() || family.front()->name != s->name) {
      out.other_vocabularies.push_back(s);
    } else {
      (family.size() > 1 ? out.per_labels : out.single).push_back(s);
    }
  }
  return out;
}

void server_rows_html(std::ostringstream& out, const std::vector<const ServerSeries*>& rows) {
  const ServerRows split = split_rows(rows);
  headline_table(out, split.single);
  if (!split.per_labels.empty()) {
    out << "<details class=\"per-labels\"><summary>" << split.per_labels.size()
        << " series by worker, engine or GPU (each label set)</summary>";
    headline_table(out, split.per_labels);
    out << "</details>";
  }
  if (!split.other_vocabularies.empty()) {
    out << "<details class=\"other-vocabularies\"><summary>" << split.other_vocabularies.size()
        << " series of the same quantities under other names (not added to the above)</summary>";
    headline_table(out, split.other_vocabularies);
    out << "</details>";
  }
  if (split.zero_series > 0) {
    out << "<p class=\"muted zero-series\">" << split.zero_series
        << " series were 0 the whole run:";
    for (size_t i = 0; i < split.zero_families.size(); ++i) {
      out << (i ? ", " : " ") << "<code>" << escape(split.zero_families[i]) << "</code>";
    }
    out << ".</p>";
  }
}

void endpoints_table(std::ostringstream& out, const ServerMetricsView& view) {
  out << "<table id=\"server-endpoints\"><thead><tr><th class=\"text\">endpoint</th>"
         "<th class=\"text\">url</th><th>scrapes</th><th>errors</th><th>dropped series</th>"
         "<th>other series</th><th class=\"text\">last error</th></tr></thead><tbody>";
  for (const ServerEndpointView& e : view.endpoints) {
    out << "<tr><td class=\"text\">" << escape(e.name) << "</td><td class=\"text\">"
        << escape(e.url) << "</td><td>" << e.scrapes << "</td><td>" << e.errors << "</td><td>"
        << e.dropped_series << "</td><td>" << e.other_series << "</td><td class=\"text\">"
        << escape(e.last_error) << "</td></tr>";
  }
  out << "</tbody></table>";
}

}  // namespace

double server_axis_end_s(const MetricsSnapshot& s, const SummaryExtras& extras) {
  if (!extras.server || !extras.server->view.present) return 0;
  const ServerMetricsView& view = extras.server->view;
  double end = view.timeline_end_s();
  end = std::max(end, static_cast<double>(s.series.size()) * s.series_bucket_s);
  end = std::max(end, static_cast<double>(s.client_timeline.size()) * s.client_timeline_bucket_s);
  for (const StageFacts& st : extras.stages) {
    end = std::max(end, static_cast<double>(st.start_ns - extras.measure_start_ns) / 1e9);
  }
  return end;
}

std::string server_section_html(const MetricsSnapshot& s, const SummaryExtras& extras) {
  if (!extras.server || !extras.server->view.present) return {};
  const ServerMetricsView& view = extras.server->view;
  std::ostringstream out;
  out << "<section id=\"server\"><h2>Server</h2><p class=\"muted\">Scraped every "
      << number(view.interval_s)
      << " s by the controller, on the client's clock and time axis (seconds from the measure "
         "start). Client TTFT is by first-token time; requests in flight are averaged over "
         "each bucket.</p>";
  endpoints_table(out, view);
  const ClientLines client = client_lines(s);
  const LineOptions options = axis_options(s, extras);
  if (!client.in_flight.points.empty()) {
    out << "<h3>Client</h3><div class=\"charts\">";
    figure(out, "Client time to first token", {client.ttft50, client.ttft99}, "ms", options);
    figure(out, "Client requests in flight", {client.in_flight}, "requests", options);
    out << "</div>";
  }
  for (const ServerEndpointView& e : view.endpoints) {
    out << "<div class=\"server-endpoint\"><h3>" << escape(e.name) << " <span class=\"muted\">"
        << escape(e.url) << "</span></h3>";
    if (e.scrapes > 0 && e.errors == e.scrapes) {
      out << "<p class=\"empty\">Every scrape failed (" << e.errors << "): " << escape(e.last_error)
          << "</p></div>";
      continue;
    }
    out << "<div class=\"charts\">";
    const int drawn = endpoint_charts(out, view, e.name, client, options);
    out << "</div>";
    const auto rows = headline_of(view, e.name);
    if (drawn == 0) {
      out << "<p class=\"empty\">No headline series over time (" << e.other_series
          << " other series recorded, listed in summary.json server_metrics).</p>";
    }
    if (!rows.empty()) server_rows_html(out, rows);
    out << "</div>";
  }
  out << "</section>";
  return out.str();
}

namespace {

std::string pad(std::string s, size_t width, bool left) {
  if (s.size() < width) s.insert(left ? 0 : s.size(), width - s.size(), ' ');
  return s;
}

std::string grouped(const std::optional<double>& v, double scale = 1) {
  return v ? format_grouped(*v * scale) : "-";
}

}  // namespace

void print_server_table(std::ostream& out, const ServerMetricsView& view, size_t width) {
  if (!view.present) return;
  constexpr size_t kNumber = 11;
  // Within `width`: the p99 column goes first (below 110 columns), then the metric names shrink.
  const bool p99 = width >= 110;
  const size_t numbers = 2 + 9 + (p99 ? 5 : 4) * kNumber;
  const size_t kLabel = std::clamp<size_t>(width > numbers ? width - numbers : 0, 20, 44);
  out << "convoy | server metrics\n";
  for (const ServerEndpointView& e : view.endpoints) {
    out << e.name << " (" << e.url << "): " << e.scrapes << " scrapes, " << e.errors << " errors";
    if (e.scrapes > 0 && e.errors == e.scrapes) out << ", every scrape failed: " << e.last_error;
    out << '\n';
    // One vocabulary per quantity, and no row for a series that stayed 0 (as on the page).
    const ServerRows split = split_rows(headline_of(view, e.name));
    std::vector<const ServerSeries*> rows = split.single;
    rows.insert(rows.end(), split.per_labels.begin(), split.per_labels.end());
    std::string skipped;
    if (split.zero_series > 0) {
      skipped = std::to_string(split.zero_series) + " series stayed 0";
    }
    if (!split.other_vocabularies.empty()) {
      skipped += (skipped.empty() ? "" : "; ") + std::to_string(split.other_vocabularies.size()) +
                 " repeat them under other names";
    }
    if (!skipped.empty()) out << "  (" << skipped << ": in summary.json)\n";
    if (rows.empty()) continue;
    out << "  " << pad("Metric", kLabel, false) << pad("unit", 9, false);
    for (const char* c : {"avg", "p99", "max", "rate/s", "total"}) {
      if (p99 || std::string_view(c) != "p99") out << pad(c, kNumber, true);
    }
    out << '\n';
    for (size_t i = 0; i < rows.size() && i < kMaxServerTableRows; ++i) {
      const ServerSeries& s = *rows[i];
      const DisplayUnit u = s.is_counter() ? DisplayUnit{1, s.unit} : display_unit(s.unit);
      std::string label = s.title.empty() ? s.name : s.title;
      if (!s.labels.empty()) label += " {" + s.labels + "}";
      if (label.size() > kLabel - 1) label = label.substr(0, kLabel - 4) + "...";
      out << "  " << pad(label, kLabel, false) << pad(u.unit, 9, false);
      if (s.is_counter()) {
        out << pad("-", kNumber, true) << (p99 ? pad("-", kNumber, true) : "")
            << pad("-", kNumber, true) << pad(grouped(s.rate_per_s), kNumber, true)
            << pad(grouped(s.delta), kNumber, true);
      } else {
        out << pad(grouped(s.avg, u.scale), kNumber, true)
            << (p99 ? pad(grouped(s.p99, u.scale), kNumber, true) : "")
            << pad(grouped(s.max, u.scale), kNumber, true) << pad("-", kNumber, true)
            << pad(s.is_histogram() ? grouped(s.count) : "-", kNumber, true);
      }
      out << '\n';
    }
    if (rows.size() > kMaxServerTableRows) {
      out << "  (" << rows.size() - kMaxServerTableRows
          << " more headline series in summary.json server_metrics)\n";
    }
  }
}

}  // namespace convoy::controller
