#include "controller/report_html.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "common/utf8.hpp"

namespace convoy::controller {

namespace {

// ---- text -----------------------------------------------------------------------------------

// Every piece of data (names, messages, ids, URLs) passes through here: a server's error
// message is untrusted text and must never become markup.
std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A value for a table cell or axis label: enough digits to read, never scientific for the
// ranges latencies and throughputs take.
std::string number(double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  const double a = std::fabs(v);
  if (a == 0) {
    return "0";
  } else if (a < 1e15 && v == std::round(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 100) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else if (a >= 1) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  std::string text = buf;
  // "125.0" reads as more precise than it is; "125" is what a person writes.
  if (text.find('.') != std::string::npos && text.find('e') == std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

std::string integer(int64_t v) { return std::to_string(v); }

// An axis label: short, no trailing zeros.
std::string tick_text(double v) {
  if (std::fabs(v) < 1e-9) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 1e6 ? "%.0f" : "%.4g", v);
  return buf;
}

// Fixed precision for SVG coordinates.
std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// ---- JSON access (the extras are built by the controller; be lenient anyway) ---------------

rapidjson::Document parse(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) doc.SetNull();
  return doc;
}

std::string str(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return {};
  const rapidjson::Value& v = it->value;
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsNumber()) return number(v.GetDouble());
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  return {};
}

double num(const rapidjson::Value& obj, const char* key, double fallback) {
  if (!obj.IsObject()) return fallback;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsNumber()) return fallback;
  return it->value.GetDouble();
}

std::vector<std::string> strings(const rapidjson::Value& obj, const char* key) {
  std::vector<std::string> out;
  if (!obj.IsObject()) return out;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsArray()) return out;
  for (const auto& v : it->value.GetArray()) {
    if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

// ---- SVG charts -----------------------------------------------------------------------------

constexpr double kChartWidth = 600;
constexpr double kChartHeight = 272;
constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 28;
constexpr double kBottom = 44;
constexpr double kPlotWidth = kChartWidth - kLeft - kRight;
constexpr double kPlotHeight = kChartHeight - kTop - kBottom;
constexpr int kYTicks = 4;
constexpr size_t kMaxLinePoints = 600;  // longer series are averaged down to this many points

// A round step so that kYTicks steps cover `max`.
double nice_step(double max) {
  if (!(max > 0) || !std::isfinite(max)) return 1;
  const double raw = max / kYTicks;
  const double pow10 = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * pow10 >= raw) return m * pow10;
  }
  return 10 * pow10;
}

struct Axes {
  double y_max = 1;  // top of the y axis
};

std::string svg_open(const std::string& label) {
  return "<svg class=\"chart\" viewBox=\"0 0 " + coord(kChartWidth) + " " + coord(kChartHeight) +
         "\" width=\"" + coord(kChartWidth) + "\" height=\"" + coord(kChartHeight) +
         "\" role=\"img\" aria-label=\"" + escape(label) + "\">";
}

// Horizontal grid lines and y labels; returns the axis top.
Axes y_axis(std::ostringstream& out, double data_max, const std::string& y_label) {
  const double step = nice_step(data_max);
  Axes axes;
  axes.y_max = step * std::max(1.0, std::ceil(data_max / step));
  const int ticks = static_cast<int>(std::lround(axes.y_max / step));
  for (int i = 0; i <= ticks; ++i) {
    const double v = step * i;
    const double y = kTop + kPlotHeight - v / axes.y_max * kPlotHeight;
    out << "<line class=\"grid\" x1=\"" << coord(kLeft) << "\" y1=\"" << coord(y) << "\" x2=\""
        << coord(kLeft + kPlotWidth) << "\" y2=\"" << coord(y) << "\"/>";
    out << "<text class=\"tick\" x=\"" << coord(kLeft - 6) << "\" y=\"" << coord(y + 4)
        << "\" text-anchor=\"end\">" << escape(tick_text(v)) << "</text>";
  }
  out << "<text class=\"axis-label\" transform=\"translate(14 " << coord(kTop + kPlotHeight / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape(y_label) << "</text>";
  out << "<line class=\"axis\" x1=\"" << coord(kLeft) << "\" y1=\"" << coord(kTop + kPlotHeight)
      << "\" x2=\"" << coord(kLeft + kPlotWidth) << "\" y2=\"" << coord(kTop + kPlotHeight)
      << "\"/>";
  return axes;
}

void x_label(std::ostringstream& out, const std::string& label) {
  out << "<text class=\"axis-label\" x=\"" << coord(kLeft + kPlotWidth / 2) << "\" y=\""
      << coord(kChartHeight - 6) << "\" text-anchor=\"middle\">" << escape(label) << "</text>";
}

void x_tick(std::ostringstream& out, double x, const std::string& text) {
  out << "<text class=\"tick\" x=\"" << coord(x) << "\" y=\"" << coord(kTop + kPlotHeight + 16)
      << "\" text-anchor=\"middle\">" << escape(text) << "</text>";
}

// A histogram: one bar per bin, equal widths (bins may be log-spaced; the ticks say where).
std::string histogram_svg(const std::vector<Bin>& bins, const std::string& title,
                          const std::string& unit) {
  std::ostringstream out;
  out << svg_open(title + " distribution");
  int64_t max_count = 0;
  for (const auto& b : bins) max_count = std::max(max_count, b.count);
  const Axes axes = y_axis(out, static_cast<double>(max_count), "requests");
  const size_t n = bins.size();
  // Every request had the same value: one narrow bar in the middle, labelled with it.
  const double width = n == 1 ? kPlotWidth / 8 : kPlotWidth / static_cast<double>(n);
  const double x0 = n == 1 ? kLeft + (kPlotWidth - width) / 2 : kLeft;
  for (size_t i = 0; i < n; ++i) {
    const double h = static_cast<double>(bins[i].count) / axes.y_max * kPlotHeight;
    const double x = x0 + width * static_cast<double>(i);
    out << "<rect class=\"bar\" x=\"" << coord(x + 0.5) << "\" y=\""
        << coord(kTop + kPlotHeight - h) << "\" width=\"" << coord(std::max(width - 1, 0.5))
        << "\" height=\"" << coord(h) << "\"><title>" << escape(number(bins[i].low)) << " to "
        << escape(number(bins[i].high)) << " " << escape(unit) << ": " << bins[i].count
        << "</title></rect>";
  }
  if (n == 1) {
    x_tick(out, x0 + width / 2, tick_text(bins[0].low));
  } else {
    for (size_t k = 0; k <= 4; ++k) {  // bin edges: first, quarters, last
      const size_t edge = n * k / 4;
      const double value = edge < n ? bins[edge].low : bins[n - 1].high;
      x_tick(out, kLeft + width * static_cast<double>(edge), tick_text(value));
    }
  }
  const bool log_spaced = n > 2 && bins[0].low > 0 &&
                          (bins[n - 1].high - bins[n - 1].low) > 2 * (bins[0].high - bins[0].low);
  x_label(out, unit + (log_spaced ? " (log scale)" : ""));
  out << "</svg>";
  return out.str();
}

struct Line {
  std::string name;
  std::string css_class;                          // s1, s2, s3: the colour
  std::vector<std::pair<double, double>> points;  // (x, y), x increasing
};

// A row of swatches in the top margin, so it never hides data.
void legend(std::ostringstream& out, const std::vector<Line>& lines) {
  double x = kLeft;
  for (const auto& l : lines) {
    out << "<rect class=\"swatch " << l.css_class << "\" x=\"" << coord(x) << "\" y=\"8\" "
        << "width=\"12\" height=\"8\"/><text class=\"legend\" x=\"" << coord(x + 16)
        << "\" y=\"16\">" << escape(l.name) << "</text>";
    x += 28 + 7 * static_cast<double>(l.name.size());
  }
}

std::string line_svg(const std::vector<Line>& lines, const std::string& title,
                     const std::string& y_label, const std::string& x_unit) {
  std::ostringstream out;
  out << svg_open(title);
  double x_max = 0, y_max = 0;
  for (const auto& l : lines) {
    for (const auto& [x, y] : l.points) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
    }
  }
  if (!(x_max > 0)) x_max = 1;
  const Axes axes = y_axis(out, y_max, y_label);
  auto px = [&](double x) { return kLeft + x / x_max * kPlotWidth; };
  auto py = [&](double y) { return kTop + kPlotHeight - y / axes.y_max * kPlotHeight; };
  const double x_step = nice_step(x_max);
  for (int k = 0; k <= 2 * kYTicks && x_step * k <= x_max * (1 + 1e-9); ++k) {
    x_tick(out, px(x_step * k), tick_text(x_step * k));
  }
  x_label(out, x_unit);
  for (const auto& l : lines) {
    if (l.points.empty()) continue;
    out << "<polyline class=\"line " << l.css_class << "\" points=\"";
    for (const auto& [x, y] : l.points) out << coord(px(x)) << "," << coord(py(y)) << " ";
    out << "\"><title>" << escape(l.name) << "</title></polyline>";
    if (l.points.size() == 1) {
      out << "<circle class=\"dot " << l.css_class << "\" cx=\"" << coord(px(l.points[0].first))
          << "\" cy=\"" << coord(py(l.points[0].second)) << "\" r=\"3\"/>";
    }
  }
  legend(out, lines);
  out << "</svg>";
  return out.str();
}

// Grouped bars: for each group label, one bar per series (series[s].points[g].second).
std::string grouped_bars_svg(const std::vector<std::string>& groups,
                             const std::vector<Line>& series, const std::string& title,
                             const std::string& y_label, const std::string& x_label_text) {
  std::ostringstream out;
  out << svg_open(title);
  double y_max = 0;
  for (const auto& s : series) {
    for (const auto& p : s.points) y_max = std::max(y_max, p.second);
  }
  const Axes axes = y_axis(out, y_max, y_label);
  const double group_width = kPlotWidth / static_cast<double>(std::max<size_t>(groups.size(), 1));
  const double bar_width =
      std::max(1.0, (group_width - 4) / static_cast<double>(std::max<size_t>(series.size(), 1)));
  const size_t label_every = groups.size() > 16 ? (groups.size() + 15) / 16 : 1;
  for (size_t g = 0; g < groups.size(); ++g) {
    const double gx = kLeft + group_width * static_cast<double>(g) + 2;
    for (size_t s = 0; s < series.size(); ++s) {
      if (g >= series[s].points.size()) continue;
      const double v = series[s].points[g].second;
      const double h = v / axes.y_max * kPlotHeight;
      out << "<rect class=\"bar " << series[s].css_class << "\" x=\""
          << coord(gx + bar_width * static_cast<double>(s)) << "\" y=\""
          << coord(kTop + kPlotHeight - h) << "\" width=\"" << coord(std::max(bar_width - 1, 0.5))
          << "\" height=\"" << coord(h) << "\"><title>turn " << escape(groups[g]) << " "
          << escape(series[s].name) << ": " << escape(number(v)) << "</title></rect>";
    }
    if (g % label_every == 0) x_tick(out, gx + group_width / 2 - 2, groups[g]);
  }
  x_label(out, x_label_text);
  legend(out, series);
  out << "</svg>";
  return out.str();
}

// ---- sections -------------------------------------------------------------------------------

constexpr const char* kStyle = R"css(
:root{--fg:#1d2330;--muted:#5b6475;--bg:#f6f7f9;--card:#fff;--line:#dde1e8;
--pass:#1a7f37;--warn:#b26b00;--fail:#c62828;--c1:#2f6fde;--c2:#e0663a;--c3:#7b57c8}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1280px;margin:0 auto;padding:24px}
header.top{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:20px 24px}
h1{margin:0 0 8px;font-size:22px}
h2{font-size:18px;margin:0 0 12px}
h3{font-size:15px;margin:0 0 8px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:20px 24px;
margin-top:16px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0 0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:2px 12px;border-radius:12px;color:#fff;font-weight:600;
text-transform:uppercase;letter-spacing:.04em}
.badge.pass{background:var(--pass)}.badge.warn{background:var(--warn)}
.badge.fail{background:var(--fail)}.badge.unknown{background:var(--muted)}
.verdict{margin-top:14px;padding:12px 16px;border-radius:6px;border-left:4px solid var(--muted);
background:var(--bg)}
.verdict.pass{border-color:var(--pass)}.verdict.warn{border-color:var(--warn)}
.verdict.fail{border-color:var(--fail)}
.verdict ul{margin:8px 0 0;padding-left:20px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:16px}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:140px}
.card .v{font-size:20px;font-weight:600}.card .k{color:var(--muted);font-size:12px}
table{border-collapse:collapse;width:100%}
th,td{padding:5px 10px;border-bottom:1px solid var(--line);text-align:right;
font-variant-numeric:tabular-nums;vertical-align:top}
th{background:var(--bg);font-weight:600}
th:first-child,td:first-child,td.text,th.text{text-align:left}
td.text{overflow-wrap:anywhere}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;flex:1 1 560px;max-width:620px}
figcaption{font-weight:600;margin-bottom:4px}
svg.chart{width:100%;height:auto;display:block}
.grid{stroke:#eceef2;stroke-width:1}.axis{stroke:#9aa3b2;stroke-width:1}
.tick{fill:var(--muted);font-size:11px}.axis-label{fill:var(--muted);font-size:12px}
.legend{fill:var(--fg);font-size:11px}
.bar,.swatch.s1{fill:var(--c1)}.bar.s2,.swatch.s2{fill:var(--c2)}
.swatch.s3{fill:var(--c3)}
.line{fill:none;stroke-width:1.8;stroke-linejoin:round}
.line.s1{stroke:var(--c1)}.line.s2{stroke:var(--c2)}.line.s3{stroke:var(--c3)}
.dot.s1{fill:var(--c1)}.dot.s2{fill:var(--c2)}.dot.s3{fill:var(--c3)}
.empty{color:var(--muted);font-style:italic}
.insight{border:1px solid var(--line);border-left:4px solid var(--warn);border-radius:6px;
padding:12px 16px;margin-bottom:12px}
.insight.error,.insight.critical{border-left-color:var(--fail)}
.insight.info{border-left-color:var(--c1)}
.insight ul{margin:2px 0 6px;padding-left:20px}
.insight h4{margin:8px 0 0;font-size:13px}
.insight p{margin:4px 0}
.muted{color:var(--muted)}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
nav{margin-top:12px}nav a{margin-right:14px;color:var(--c1);text-decoration:none}
footer{color:var(--muted);text-align:center;margin:24px 0 8px;font-size:12px}
)css";

std::string verdict_class(const std::string& status) {
  if (status == "pass" || status == "warn" || status == "fail") return status;
  return "unknown";
}

void header_section(std::ostringstream& out, const rapidjson::Value& run,
                    const rapidjson::Value& verdict, const MetricsSnapshot& s) {
  const std::string name = str(run, "name");
  out << "<header class=\"top\"><h1>convoy report" << (name.empty() ? "" : ": ") << escape(name)
      << "</h1><dl class=\"facts\">";
  auto fact = [&](const char* label, const std::string& value) {
    if (value.empty()) return;
    out << "<dt>" << label << "</dt><dd>" << escape(value) << "</dd>";
  };
  fact("Target", str(run, "target_url"));
  fact("Start", str(run, "start"));
  fact("End", str(run, "end"));
  fact("Measured duration", number(s.duration_s) + " s");
  fact("convoy version", str(run, "convoy_version"));
  fact("Output folder", str(run, "output_dir"));
  if (str(run, "interrupted") == "true") fact("Interrupted", "yes: results are partial");
  if (str(run, "incomplete") == "true") fact("Incomplete", str(run, "incomplete_reason"));
  out << "</dl>";

  std::string status = str(verdict, "status");
  if (status.empty()) status = "unknown";
  const std::string cls = verdict_class(status);
  out << "<div class=\"verdict " << cls << "\" id=\"verdict\"><strong>Verdict</strong> "
      << "<span class=\"badge " << cls << "\">" << escape(status) << "</span>";
  const double intended = num(verdict, "intended_rate_per_s", 0);
  const double achieved = num(verdict, "achieved_rate_per_s", 0);
  const double ks = num(verdict, "ks_statistic", -1);
  const double p = num(verdict, "ks_p_value", -1);
  if (intended > 0) {
    out << " <span class=\"muted\">intended " << escape(number(intended))
        << " conversations/s, achieved " << escape(number(achieved)) << "/s";
    if (ks >= 0) {
      out << "; inter-arrival KS D=" << escape(number(ks)) << ", p=" << escape(number(p));
    }
    out << "</span>";
  }
  const auto reasons = strings(verdict, "reasons");
  if (reasons.empty()) {
    out << "<p class=\"muted\">The run delivered the intended load with no finding.</p>";
  } else {
    out << "<ul>";
    for (const auto& r : reasons) out << "<li>" << escape(r) << "</li>";
    out << "</ul>";
  }
  out << "</div><nav><a href=\"#summary\">Summary</a><a href=\"#distributions\">Distributions</a>"
         "<a href=\"#over-time\">Over time</a><a href=\"#ttft-by-turn\">TTFT by turn</a>"
         "<a href=\"#errors\">Errors</a><a href=\"#insights\">Insights</a>"
         "<a href=\"#workers\">Workers</a></nav></header>";
}

bool is_run_total(const std::string& tag) {
  for (const char* t : {"output_token_throughput", "request_throughput", "goodput", "request_count",
                        "error_request_count", "benchmark_duration"}) {
    if (tag == t) return true;
  }
  return false;
}

void summary_section(std::ostringstream& out, const MetricsSnapshot& s) {
  out << "<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">";
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
    if (is_run_total(m.tag)) {
      // One value for the whole run: percentiles of it would only repeat it.
      out << "<td>" << number(m.avg) << "</td><td colspan=\"7\"></td>";
    } else {
      out << "<td>" << number(m.avg) << "</td><td>" << number(m.min) << "</td><td>" << number(m.max)
          << "</td><td>" << number(m.p(50)) << "</td><td>" << number(m.p(90)) << "</td><td>"
          << number(m.p(99)) << "</td><td>" << number(m.std) << "</td><td>" << m.count << "</td>";
    }
    out << "<td class=\"text\">" << escape(m.unit) << "</td></tr>";
  }
  out << "</tbody></table></section>";
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

void over_time_section(std::ostringstream& out, const MetricsSnapshot& s) {
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
  out << "<p class=\"muted\">Buckets of " << number(width_s)
      << " s by completion time, from the first measured send.</p><div class=\"charts\">";
  out << "<figure><figcaption>Request throughput</figcaption>"
      << line_svg({requests, errors}, "Request throughput", "per second", "seconds") << "</figure>";
  out << "<figure><figcaption>Output token throughput</figcaption>"
      << line_svg({tokens}, "Output token throughput", "tokens per second", "seconds")
      << "</figure>";
  out << "<figure><figcaption>Mean time to first token</figcaption>";
  if (ttft.points.empty()) {
    out << "<p class=\"empty\">No successful requests: no TTFT to plot.</p>";
  } else {
    out << line_svg({ttft}, "Mean time to first token", "ms", "seconds");
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
      << (name.empty() ? "" : ": ") << escape(name) << "</title><style>" << kStyle
      << "</style></head><body><main>";
  header_section(out, run, verdict, snapshot);
  summary_section(out, snapshot);
  distributions_section(out, snapshot);
  over_time_section(out, snapshot);
  ttft_by_turn_section(out, snapshot);
  errors_section(out, snapshot);
  insights_section(out, insights);
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
