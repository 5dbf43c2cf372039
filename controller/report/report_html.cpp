#include "controller/report/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "common/utf8.hpp"
#include "controller/report/model_results.hpp"
#include "controller/report/report_header.hpp"
#include "controller/report/report_json.hpp"
#include "controller/report/report_style.hpp"
#include "controller/report/server_section.hpp"
#include "controller/report/svg_chart.hpp"
#include "controller/report/verdict.hpp"

namespace convoy::controller {

namespace {

using chart::escape;
using chart::grouped_bars_svg;
using chart::histogram_svg;
using chart::Line;
using chart::line_svg;
using chart::LineOptions;
using chart::Marker;
using chart::number;

std::string integer(int64_t v) { return std::to_string(v); }

using report_json::num;
using report_json::parse;
using report_json::str;
using report_json::strings;
using report_json::verdict_class;

constexpr size_t kMaxLinePoints = 600;  // longer series are averaged down to this many points

// ---- sections -------------------------------------------------------------------------------

// Sweeps and searches draw the throughput-latency curve; hand-written stages do not (their
// levels need not grow, so a curve through them would mean nothing).
bool has_curve(const SummaryExtras& extras) {
  return !extras.stages.empty() &&
         (extras.profile == ProfileKind::kSweep || extras.profile == ProfileKind::kSearch);
}

bool is_run_total(const std::string& tag) {
  for (const char* t : {"output_token_throughput", "request_throughput", "goodput", "request_count",
                        "error_request_count", "benchmark_duration"}) {
    if (tag == t) return true;
  }
  return false;
}

void summary_section(std::ostringstream& out, const MetricsSnapshot& s, bool pooled) {
  out << "<section id=\"summary\"><h2>Summary"
      << (pooled ? " <span class=\"muted\">(every stage pooled)</span>" : "")
      << "</h2><div class=\"cards\">";
  auto card = [&](const std::string& value, const char* label) {
    out << "<div class=\"card\"><div class=\"v\">" << escape(value) << "</div><div class=\"k\">"
        << label << "</div></div>";
  };
  card(integer(s.request_count), "successful requests");
  card(integer(s.error_request_count), "failed requests");
  card(number(s.error_rate() * 100) + " %", "error rate");
  card(number(s.request_throughput), "requests/s");
  card(number(s.output_token_throughput), "output tokens/s");
  if (s.has_slo) card(number(s.goodput), "goodput (requests/s)");
  card(number(s.duration_s) + " s", "measured duration");
  out << "</div>";
  if (s.warmup_request_count > 0) {
    out << "<p class=\"muted\">" << s.warmup_request_count << " warmup request(s) ("
        << s.warmup_error_count << " failed) are excluded from every metric.</p>";
  }
  out << "<table><thead><tr><th class=\"text\">metric</th><th>avg</th><th>min</th><th>max</th>"
         "<th>p50</th><th>p90</th><th>p99</th><th>std</th><th>count</th>"
         "<th class=\"text\">unit</th></tr></thead><tbody>";
  for (const auto& m : s.metrics) {
    out << "<tr><td class=\"text\" title=\"" << escape(m.tag) << "\">" << escape(m.header)
        << "</td>";
    if (m.aggregate || is_run_total(m.tag)) {
      // One value for the whole run: percentiles of it would only repeat it.
      out << "<td>" << number(m.avg)
          << "</td><td colspan=\"7\" class=\"text muted\">one value for the run</td>";
    } else {
      out << "<td>" << number(m.avg) << "</td><td>" << number(m.min) << "</td><td>" << number(m.max)
          << "</td><td>" << number(m.p(50)) << "</td><td>" << number(m.p(90)) << "</td><td>"
          << number(m.p(99)) << "</td><td>" << number(m.std) << "</td><td>" << m.count << "</td>";
    }
    out << "<td class=\"text\">" << escape(m.unit) << "</td></tr>";
  }
  out << "</tbody></table></section>";
}

// ---- load profiles: the stage table and the throughput-latency curve ---------------------------

double stat_of(const MetricsSnapshot& s, std::string_view tag, double q) {
  const MetricStats* m = s.find(tag);
  if (m == nullptr || m->count == 0) return std::nan("");
  return m->p(q);
}

void stages_section(std::ostringstream& out, const SummaryExtras& extras) {
  if (extras.stages.empty()) return;
  out << "<section id=\"stages\"><h2>Stages</h2>";
  if (const SearchFacts* search = extras.search) {
    const char* vary = to_string(search->config.vary);
    out << "<p id=\"search-result\">Capacity search over " << vary << ": highest value meeting "
        << "the SLO <strong>"
        << (search->max_meeting_slo ? number(*search->max_meeting_slo) : "none") << "</strong>"
        << (search->max_meeting_slo ? ""
            : search->steps.empty() ? " (none judged: the search was interrupted)"
                                    : " (even low missed it)")
        << ", lowest failing <strong>"
        << (search->min_failing ? number(*search->min_failing) : "none") << "</strong>"
        << (search->min_failing ? ""
            : search->complete  ? " (even high met it)"
                                : " (none judged: the search was interrupted)")
        << "; " << search->steps.size() << " step(s), in the order they ran below.</p>";
  }
  bool any_slo = false;
  bool any_goodput = false;
  for (const StageFacts& st : extras.stages) {
    any_slo = any_slo || st.slo_met.has_value();
    any_goodput = any_goodput || st.metrics.has_slo;
  }
  out << "<p class=\"muted\">A request belongs to the stage in which it was intended to be sent; "
         "requests intended in a settle window are in no stage. Start and end in seconds from "
         "the measure start; latencies in ms.</p>"
         "<table id=\"stage-table\"><thead><tr><th>#</th><th class=\"text\">stage</th>";
  // A sweep's or a search's stage is named by its level ("concurrency=8"): no second column.
  const bool show_level =
      extras.profile != ProfileKind::kSweep && extras.profile != ProfileKind::kSearch;
  if (show_level) out << "<th class=\"text\">level</th>";
  out << "<th>start s</th><th>end s</th><th>requests</th><th>errors</th><th>req/s</th>"
         "<th>output tok/s</th>";
  if (any_goodput) out << "<th>goodput</th>";
  out << "<th>TTFT p50</th><th>TTFT p99</th><th>ITL p50</th><th>ITL p99</th>"
         "<th class=\"text\">verdict</th>";
  if (any_slo) out << "<th class=\"text\">SLO</th>";
  out << "</tr></thead><tbody>";
  for (const StageFacts& st : extras.stages) {
    const MetricsSnapshot& m = st.metrics;
    const Verdict v = judge_stage(st);
    const std::string status = to_string(v.status);
    auto seconds = [&](int64_t ns) {
      return number(static_cast<double>(ns - extras.measure_start_ns) / 1e9);
    };
    out << "<tr class=\"stage-row\"><td>" << st.config.index << "</td><td class=\"text\">"
        << escape(st.config.name) << "</td>";
    if (show_level) out << "<td class=\"text\">" << escape(stage_level_text(st.config)) << "</td>";
    out << "<td>" << seconds(st.start_ns) << "</td><td>" << seconds(st.end_ns) << "</td><td>"
        << m.request_count << "</td><td>" << m.error_request_count << "</td><td>"
        << number(m.request_throughput) << "</td><td>" << number(m.output_token_throughput)
        << "</td>";
    if (any_goodput) out << "<td>" << (m.has_slo ? number(m.goodput) : "-") << "</td>";
    for (double x :
         {stat_of(m, "time_to_first_token", 50), stat_of(m, "time_to_first_token", 99),
          stat_of(m, "inter_token_latency", 50), stat_of(m, "inter_token_latency", 99)}) {
      out << "<td>" << number(x) << "</td>";
    }
    out << "<td class=\"text reasons\"><span class=\"badge small " << verdict_class(status) << "\">"
        << escape(status) << "</span>";
    for (const auto& r : v.reasons) out << "<br><span class=\"muted\">" << escape(r) << "</span>";
    out << "</td>";
    if (any_slo) {
      out << "<td class=\"text reasons\">";
      if (st.slo_met) {
        out << (*st.slo_met ? "met" : "missed");
        for (const auto& f : st.slo_failures) {
          out << "<br><span class=\"muted\">" << escape(f) << "</span>";
        }
      }
      out << "</td>";
    }
    out << "</tr>";
  }
  out << "</tbody></table></section>";
}

// "c=8", "r=2.5/s": a stage's level, short enough to sit beside a point.
std::string level_label(const StageConfig& st) {
  const bool rate = st.mode == LoadMode::kRate;
  return (rate ? "r=" : "c=") + number(st.value) + (rate ? "/s" : "");
}

// A capacity search: TTFT p99 of every step against the value it tried, the SLO's TTFT p99
// limit as a line, the steps that met it and those that missed it in two colours.
void search_chart(std::ostringstream& out, const SummaryExtras& extras) {
  const SearchFacts* search = extras.search;
  if (search == nullptr || search->steps.empty()) return;
  Line met{"met the SLO", "met"};
  Line missed{"missed the SLO", "missed"};
  met.dots_only = missed.dots_only = true;
  for (const SearchStep& step : search->steps) {
    if (step.stage_index < 0 || static_cast<size_t>(step.stage_index) >= extras.stages.size()) {
      continue;
    }
    const MetricsSnapshot& m = extras.stages[static_cast<size_t>(step.stage_index)].metrics;
    const double y = stat_of(m, "time_to_first_token", 99);
    if (!std::isfinite(y)) continue;
    Line& line = step.met ? met : missed;
    line.points.emplace_back(step.value, y);
    line.point_labels.push_back(number(step.value));
  }
  if (met.points.empty() && missed.points.empty()) return;
  LineOptions o;
  const auto& limits = search->config.slo.limits;
  if (auto it = limits.find("time_to_first_token"); it != limits.end()) {
    if (auto p99 = it->second.find("p99"); p99 != it->second.end()) {
      o.threshold = p99->second;
      o.threshold_label = "SLO: TTFT p99 <= " + number(p99->second) + " ms";
    }
  }
  const std::string vary = to_string(search->config.vary);
  out << "<figure id=\"search-chart\"><figcaption>TTFT p99 of each step against the searched "
      << escape(vary) << "</figcaption>"
      << line_svg({met, missed}, "TTFT p99 against " + vary, "ms (TTFT p99)", vary, o)
      << "</figure>";
}

// The throughput-latency curve (sweeps and searches): one point per stage, in the order of the
// load it was offered, so past the knee the line turns back as throughput stops growing.
void curve_section(std::ostringstream& out, const SummaryExtras& extras) {
  if (!has_curve(extras)) return;
  std::vector<const StageFacts*> order;
  for (const StageFacts& st : extras.stages) order.push_back(&st);
  std::stable_sort(order.begin(), order.end(), [](const StageFacts* a, const StageFacts* b) {
    return a->config.value < b->config.value;
  });
  Line ttft50{"TTFT p50", "s1", {}};
  Line ttft99{"TTFT p99", "s2", {}};
  Line itl50{"ITL p50", "s1", {}};
  Line itl99{"ITL p99", "s2", {}};
  Line goodput{"goodput (requests/s)", "s3", {}};
  Line requests{"requests/s", "s1", {}};
  bool any_goodput = false;
  for (const StageFacts* st : order) {
    const MetricsSnapshot& m = st->metrics;
    if (m.request_count == 0) continue;
    const double x = m.output_token_throughput;
    auto add = [x](Line& line, double y) {
      if (std::isfinite(y)) line.points.emplace_back(x, y);
    };
    // Each point names its level on the upper line, so the curve reads without the table.
    const std::string level = level_label(st->config);
    auto add_labelled = [&](Line& line, double y) {
      if (!std::isfinite(y)) return;
      line.points.emplace_back(x, y);
      line.point_labels.push_back(level);
    };
    add(ttft50, stat_of(m, "time_to_first_token", 50));
    add_labelled(ttft99, stat_of(m, "time_to_first_token", 99));
    add(itl50, stat_of(m, "inter_token_latency", 50));
    add_labelled(itl99, stat_of(m, "inter_token_latency", 99));
    add(requests, m.request_throughput);
    if (m.has_slo) {
      any_goodput = true;
      add(goodput, m.goodput);
    }
  }
  out << "<section id=\"curve\"><h2>Throughput and latency</h2>";
  if (ttft50.points.empty() && itl50.points.empty()) {
    out << "<p class=\"empty\">No stage had a successful request: no curve to plot.</p>"
           "</section>";
    return;
  }
  LineOptions dots;
  dots.dots = true;
  out << "<p class=\"muted\">One point per stage, joined in the order of the load offered "
         "(the stage's value). Where latency climbs steeply while output tokens/s stop growing "
         "is the knee.</p><div class=\"charts\">";
  search_chart(out, extras);
  out << "<figure><figcaption>Time to first token against throughput</figcaption>"
      << line_svg({ttft50, ttft99}, "TTFT against output token throughput", "ms", "output tokens/s",
                  dots)
      << "</figure>";
  out << "<figure><figcaption>Inter-token latency against throughput</figcaption>"
      << line_svg({itl50, itl99}, "ITL against output token throughput", "ms", "output tokens/s",
                  dots)
      << "</figure>";
  if (any_goodput) {
    out << "<figure><figcaption>Goodput against throughput</figcaption>"
        << line_svg({requests, goodput}, "Goodput against output token throughput",
                    "requests per second", "output tokens/s", dots)
        << "</figure>";
  }
  out << "</div></section>";
}

const char* no_success_text(const MetricsSnapshot& s) {
  return s.request_count + s.error_request_count == 0 ? "No measured request completed."
                                                      : "No successful requests: nothing to plot.";
}

void distributions_section(std::ostringstream& out, const MetricsSnapshot& s) {
  out << "<section id=\"distributions\"><h2>Latency distributions</h2>";
  struct Plot {
    const char* tag;
    const char* title;
  };
  constexpr Plot kPlots[] = {{"time_to_first_token", "Time to first token"},
                             {"inter_token_latency", "Inter-token latency"},
                             {"request_latency", "Request latency"}};
  bool any = false;
  out << "<div class=\"charts\">";
  for (const auto& plot : kPlots) {
    auto it = s.distributions.find(plot.tag);
    if (it == s.distributions.end() || it->second.empty()) continue;
    any = true;
    const MetricStats* m = s.find(plot.tag);
    const std::string unit = m ? m->unit : "ms";
    out << "<figure><figcaption>" << plot.title;
    if (m) {
      out << " <span class=\"muted\">p50 " << number(m->p(50)) << ", p99 " << number(m->p(99))
          << " " << escape(unit) << "</span>";
    }
    out << "</figcaption>" << histogram_svg(it->second, plot.title, unit) << "</figure>";
  }
  out << "</div>";
  if (!any) out << "<p class=\"empty\">" << no_success_text(s) << "</p>";
  out << "</section>";
}

// Averages a long series down to at most kMaxLinePoints points so the page stays small.
std::vector<SeriesPoint> downsample(const std::vector<SeriesPoint>& series, double bucket_s,
                                    double& width_s) {
  width_s = bucket_s;
  if (series.size() <= kMaxLinePoints) return series;
  const size_t group = (series.size() + kMaxLinePoints - 1) / kMaxLinePoints;
  width_s = bucket_s * static_cast<double>(group);
  std::vector<SeriesPoint> out;
  for (size_t i = 0; i < series.size(); i += group) {
    SeriesPoint p;
    p.start_s = series[i].start_s;
    double ttft_weighted = 0;
    int64_t ttft_requests = 0;
    for (size_t j = i; j < std::min(series.size(), i + group); ++j) {
      p.requests += series[j].requests;
      p.errors += series[j].errors;
      p.output_tokens += series[j].output_tokens;
      if (series[j].mean_ttft_ms) {
        ttft_weighted += *series[j].mean_ttft_ms * static_cast<double>(series[j].requests);
        ttft_requests += series[j].requests;
      }
    }
    if (ttft_requests > 0) p.mean_ttft_ms = ttft_weighted / static_cast<double>(ttft_requests);
    out.push_back(p);
  }
  return out;
}

// Stage boundaries on the over-time charts: each stage's start, in seconds from the series'
// origin (the measure start). The series counts requests by completion time, the stages by
// intended send time, so a stage's requests finish a little to the right of its mark.
std::vector<Marker> stage_markers(const SummaryExtras& extras) {
  std::vector<Marker> markers;
  for (const StageFacts& st : extras.stages) {
    markers.push_back(
        {static_cast<double>(st.start_ns - extras.measure_start_ns) / 1e9, st.config.name});
  }
  return markers;
}

void over_time_section(std::ostringstream& out, const MetricsSnapshot& s,
                       const SummaryExtras& extras) {
  out << "<section id=\"over-time\"><h2>Over time</h2>";
  if (s.series.empty()) {
    out << "<p class=\"empty\">" << no_success_text(s) << "</p></section>";
    return;
  }
  double width_s = 1;
  const std::vector<SeriesPoint> points =
      downsample(s.series, s.series_bucket_s > 0 ? s.series_bucket_s : 1, width_s);
  Line requests{"requests/s", "s1", {}};
  Line errors{"errors/s", "s2", {}};
  Line tokens{"output tokens/s", "s3", {}};
  Line ttft{"mean TTFT (ms)", "s1", {}};
  for (const auto& p : points) {
    // Plot each bucket at its middle: a rate over [start, start + width).
    const double x = p.start_s + width_s / 2;
    requests.points.emplace_back(x, static_cast<double>(p.requests) / width_s);
    errors.points.emplace_back(x, static_cast<double>(p.errors) / width_s);
    tokens.points.emplace_back(x, static_cast<double>(p.output_tokens) / width_s);
    if (p.mean_ttft_ms) ttft.points.emplace_back(x, *p.mean_ttft_ms);
  }
  LineOptions marks;
  marks.markers = stage_markers(extras);
  marks.x_max = server_axis_end_s(s, extras);  // the Server section's time axis (0: none)
  out << "<p class=\"muted\">Buckets of " << number(width_s)
      << " s by completion time, from the first measured send.";
  if (!marks.markers.empty()) {
    out << " Dashed lines mark where each stage starts (by intended send time).";
  }
  out << "</p><div class=\"charts\">";
  out << "<figure><figcaption>Request throughput</figcaption>"
      << line_svg({requests, errors}, "Request throughput", "per second", "seconds", marks)
      << "</figure>";
  out << "<figure><figcaption>Output token throughput</figcaption>"
      << line_svg({tokens}, "Output token throughput", "tokens per second", "seconds", marks)
      << "</figure>";
  out << "<figure><figcaption>Mean time to first token</figcaption>";
  if (ttft.points.empty()) {
    out << "<p class=\"empty\">No successful requests: no TTFT to plot.</p>";
  } else {
    out << line_svg({ttft}, "Mean time to first token", "ms", "seconds", marks);
  }
  out << "</figure></div></section>";
}

void ttft_by_turn_section(std::ostringstream& out, const MetricsSnapshot& s) {
  out << "<section id=\"ttft-by-turn\"><h2>Time to first token by turn</h2>";
  std::vector<std::string> groups;
  Line p50{"p50", "s1", {}};
  Line p90{"p90", "s2", {}};
  for (const auto& t : s.ttft_by_turn) {
    if (t.ttft.count == 0) continue;
    groups.push_back(std::to_string(t.turn_index) + (t.and_later ? "+" : ""));
    const double x = static_cast<double>(groups.size());
    p50.points.emplace_back(x, t.ttft.p(50));
    p90.points.emplace_back(x, t.ttft.p(90));
  }
  if (groups.empty()) {
    out << "<p class=\"empty\">" << no_success_text(s) << "</p></section>";
    return;
  }
  out << "<p class=\"muted\">Later turns carry the conversation's history; with prefix caching "
         "their TTFT should not grow with the turn index.</p><div class=\"charts\"><figure>"
      << grouped_bars_svg(groups, {p50, p90}, "TTFT by turn index", "ms", "turn index")
      << "</figure><figure><table><thead><tr><th class=\"text\">turn</th><th>requests</th>"
         "<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th></tr></thead><tbody>";
  for (const auto& t : s.ttft_by_turn) {
    if (t.ttft.count == 0) continue;
    out << "<tr><td class=\"text\">" << t.turn_index << (t.and_later ? " and later" : "")
        << "</td><td>" << t.ttft.count << "</td><td>" << number(t.ttft.p(50)) << "</td><td>"
        << number(t.ttft.p(90)) << "</td><td>" << number(t.ttft.p(99)) << "</td></tr>";
  }
  out << "</tbody></table></figure></div></section>";
}

void errors_section(std::ostringstream& out, const MetricsSnapshot& s) {
  out << "<section id=\"errors\"><h2>Errors</h2>";
  if (s.errors.empty()) {
    out << "<p class=\"empty\">No failed requests.</p></section>";
    return;
  }
  out << "<table><thead><tr><th class=\"text\">code</th><th class=\"text\">type</th>"
         "<th class=\"text\">message</th><th>count</th><th class=\"text\">example correlation "
         "ids</th></tr></thead><tbody>";
  for (const auto& e : s.errors) {
    out << "<tr><td class=\"text\">" << e.code << "</td><td class=\"text\">" << escape(e.type)
        << "</td><td class=\"text\">" << escape(e.message) << "</td><td>" << e.count
        << "</td><td class=\"text\">";
    for (size_t i = 0; i < e.example_correlation_ids.size(); ++i) {
      out << (i ? "<br>" : "") << "<code>" << escape(e.example_correlation_ids[i]) << "</code>";
    }
    out << "</td></tr>";
  }
  out << "</tbody></table></section>";
}

void list_block(std::ostringstream& out, const char* title, const std::vector<std::string>& items) {
  if (items.empty()) return;
  out << "<h4>" << title << "</h4><ul>";
  for (const auto& i : items) out << "<li>" << escape(i) << "</li>";
  out << "</ul>";
}

void insights_section(std::ostringstream& out, const rapidjson::Value& insights) {
  out << "<section id=\"insights\"><h2>Insights</h2>";
  if (!insights.IsArray() || insights.Empty()) {
    out << "<p class=\"empty\">No insight: nothing in the run matched a known problem.</p>"
           "</section>";
    return;
  }
  for (const auto& i : insights.GetArray()) {
    const std::string severity = str(i, "severity");
    out << "<div class=\"insight " << escape(severity) << "\"><h3>" << escape(str(i, "title"))
        << " <span class=\"muted\">" << escape(severity) << "</span></h3><p>"
        << escape(str(i, "problem")) << "</p>";
    list_block(out, "Likely causes", strings(i, "likely_causes"));
    list_block(out, "Investigate", strings(i, "investigate"));
    list_block(out, "Fixes", strings(i, "fixes"));
    const double affected = num(i, "affected_requests", 0);
    const auto ids = strings(i, "example_correlation_ids");
    if (affected > 0 || !ids.empty()) {
      out << "<p class=\"muted\">" << escape(number(affected)) << " request(s) affected";
      if (!ids.empty()) {
        out << "; for example";
        for (const auto& id : ids) out << " <code>" << escape(id) << "</code>";
      }
      out << "</p>";
    }
    out << "</div>";
  }
  out << "</section>";
}

std::string bytes_text(double bytes) {
  if (!(bytes > 0)) return "-";
  return number(bytes / (1024.0 * 1024.0)) + " MiB";
}

void workers_section(std::ostringstream& out, const rapidjson::Value& workers) {
  out << "<section id=\"workers\"><h2>Workers</h2>";
  if (!workers.IsArray() || workers.Empty()) {
    out << "<p class=\"empty\">No worker information.</p></section>";
    return;
  }
  out << "<table><thead><tr><th class=\"text\">worker</th><th class=\"text\">host</th>"
         "<th class=\"text\">state</th><th>records</th><th>clock offset ms</th>"
         "<th>max CPU %</th><th>max RSS</th><th>legacy open sessions</th></tr></thead><tbody>";
  for (const auto& w : workers.GetArray()) {
    out << "<tr><td class=\"text\">" << escape(str(w, "worker_id")) << "</td><td class=\"text\">"
        << escape(str(w, "host")) << "</td><td class=\"text\">" << escape(str(w, "state"))
        << "</td><td>" << escape(str(w, "records")) << "</td><td>"
        << number(num(w, "clock_offset_ns", 0) / 1e6) << "</td><td>"
        << number(num(w, "max_cpu_percent", 0)) << "</td><td>"
        << bytes_text(num(w, "max_rss_bytes", 0)) << "</td><td>"
        << escape(str(w, "legacy_open_sessions")) << "</td></tr>";
  }
  out << "</tbody></table></section>";
}

}  // namespace

std::string report_html(const MetricsSnapshot& snapshot, const SummaryExtras& extras) {
  const rapidjson::Document run = parse(extras.run_json);
  const rapidjson::Document workers = parse(extras.workers_json);
  const rapidjson::Document insights = parse(extras.insights_json);
  const rapidjson::Document verdict = parse(extras.verdict_json);
  const std::string name = str(run, "name");

  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         // The page must work offline; the policy makes any fetch fail loudly, even a future one.
         "<meta http-equiv=\"Content-Security-Policy\" "
         "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
         "<title>convoy report"
      << (name.empty() ? "" : ": ") << escape(name) << "</title><style>" << kReportStyle
      << "</style></head><body><main>";
  PageSections sections;
  // Nothing succeeded: no chart would hold a point, and the cause is in the insights and the
  // errors, so those come first and the empty charts are left out.
  sections.charts = snapshot.request_count > 0;
  sections.stages = !extras.stages.empty();
  sections.curve = has_curve(extras);
  sections.server = extras.server != nullptr;
  header_html(out, run, verdict, insights, snapshot, extras, sections);
  if (!sections.charts) {
    insights_section(out, insights);
    errors_section(out, snapshot);
    out << "<section id=\"no-charts\"><p class=\"empty\">" << no_success_text(snapshot)
        << " No latency distribution, over-time or per-turn chart is drawn.</p></section>";
  }
  // A profile answers per stage first; the table pooling every stage comes after it.
  stages_section(out, extras);
  curve_section(out, extras);
  summary_section(out, snapshot, !extras.stages.empty());
  out << models_section_html(snapshot);  // "" without target.models
  if (sections.charts) {
    distributions_section(out, snapshot);
    over_time_section(out, snapshot, extras);
  }
  out << server_section_html(snapshot, extras);  // "" without server telemetry
  if (sections.charts) {
    ttft_by_turn_section(out, snapshot);
    errors_section(out, snapshot);
    insights_section(out, insights);
  }
  workers_section(out, workers);
  out << "<footer>Generated by convoy";
  if (const std::string v = str(run, "convoy_version"); !v.empty()) out << " " << escape(v);
  out << ". Self-contained: this page loads nothing from the network.</footer>"
         "</main></body></html>\n";
  std::string page = out.str();
  sanitize_utf8_in_place(page);  // the page declares utf-8; a server's bytes must not break it
  return page;
}

void write_report_html(const std::filesystem::path& path, const MetricsSnapshot& snapshot,
                       const SummaryExtras& extras) {
  write_file_atomically(path, report_html(snapshot, extras));
}

}  // namespace convoy::controller
