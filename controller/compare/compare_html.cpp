// compare.html: the side-by-side table, overlaid latency distributions (latency by percentile,
// from each summary's percentile keys), the throughput-latency curve, per-turn TTFT and the
// config differences. Charts are the report room's SVG (controller/report/svg_chart.hpp).
#include <algorithm>
#include <set>
#include <sstream>

#include "common/build_info.hpp"
#include "common/utf8.hpp"
#include "controller/compare/compare_output.hpp"
#include "controller/report/svg_chart.hpp"

namespace convoy::controller::compare {

namespace {

using chart::escape;
using chart::number;

constexpr int kColours = 10;

// The colour class of column (or series) i: s1 .. s10, then again.
std::string colour(size_t i) { return "s" + std::to_string(i % kColours + 1); }

constexpr const char* kStyle = R"css(
:root{--fg:#1d2330;--muted:#5b6475;--bg:#f6f7f9;--card:#fff;--line:#dde1e8;
--better:#1a7f37;--worse:#c62828;
--c1:#2f6fde;--c2:#e0663a;--c3:#7b57c8;--c4:#1a9e77;--c5:#c99a06;--c6:#c2185b;--c7:#00838f;
--c8:#6d4c41;--c9:#546e7a;--c10:#8d9e24}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1280px;margin:0 auto;padding:24px}
header.top,section{background:var(--card);border:1px solid var(--line);border-radius:8px;
padding:20px 24px;margin-top:16px}
h1{margin:0 0 8px;font-size:22px}h2{font-size:18px;margin:0 0 12px}
table{border-collapse:collapse;width:100%}
th,td{padding:5px 10px;border-bottom:1px solid var(--line);text-align:right;
font-variant-numeric:tabular-nums;vertical-align:top}
th{background:var(--bg);font-weight:600}
th:first-child,td:first-child,td.text,th.text{text-align:left}
td.text{overflow-wrap:anywhere}
td.differs{background:#fff6e0}
.better{color:var(--better)}.worse{color:var(--worse)}.same,.noise,.muted{color:var(--muted)}
.diff{font-size:12px;margin-left:6px}
.charts{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;flex:1 1 560px;max-width:620px}
figcaption{font-weight:600;margin-bottom:4px}
svg.chart{width:100%;height:auto;display:block}
.grid{stroke:#eceef2;stroke-width:1}.axis{stroke:#9aa3b2;stroke-width:1}
.tick{fill:var(--muted);font-size:11px}.axis-label{fill:var(--muted);font-size:12px}
.legend{fill:var(--fg);font-size:11px}
.line{fill:none;stroke-width:1.8;stroke-linejoin:round}.line.dash{stroke-dasharray:5 3}
.s1{--c:var(--c1)}.s2{--c:var(--c2)}.s3{--c:var(--c3)}.s4{--c:var(--c4)}.s5{--c:var(--c5)}
.s6{--c:var(--c6)}.s7{--c:var(--c7)}.s8{--c:var(--c8)}.s9{--c:var(--c9)}.s10{--c:var(--c10)}
.line{stroke:var(--c)}.dot,.bar,.swatch{fill:var(--c)}
.empty{color:var(--muted);font-style:italic}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
footer{color:var(--muted);text-align:center;margin:24px 0 8px;font-size:12px}
)css";

void header_section(std::ostringstream& out, const Comparison& cmp) {
  out << "<header class=\"top\"><h1>convoy compare</h1><p>"
      << (cmp.stages_mode ? "The stages of one run" : "Runs")
      << " side by side. The first column is the baseline; every other value shows its "
         "difference from it.</p><table id=\"columns\"><thead><tr><th class=\"text\">column"
         "</th><th class=\"text\">run folder</th><th class=\"text\">stage</th><th>level</th>"
         "</tr></thead><tbody>";
  for (const Column& c : cmp.columns) {
    out << "<tr><td class=\"text\">" << escape(c.name) << "</td><td class=\"text\"><code>"
        << escape(c.folder) << "</code></td><td class=\"text\">" << escape(c.stage) << "</td><td>"
        << (c.stage_value ? number(*c.stage_value) : "") << "</td></tr>";
  }
  out << "</tbody></table></header>";
}

// The CSS class of a judgement: "within noise" is muted like "same", never coloured.
std::string judgement_class(const std::string& j) { return j == "within noise" ? "noise" : j; }

void table_section(std::ostringstream& out, const Comparison& cmp) {
  out << "<section id=\"table\"><h2>Headline metrics</h2><p class=\"muted\">A difference is "
         "marked better or worse only when it is larger than the noise: for a percentile of two "
         "runs that both kept records.jsonl, when their 95% intervals (order statistics) do not "
         "overlap; otherwise when it reaches "
      << number(kMinRelativeDiffPct)
      << "%. n: the successful requests measured.</p><table><thead><tr>"
         "<th class=\"text\">metric</th><th class=\"text\">unit</th><th class=\"text\">better"
         "</th>";
  for (const Column& c : cmp.columns) out << "<th>" << escape(c.name) << "</th>";
  out << "</tr></thead><tbody><tr class=\"samples-row\"><td class=\"text\">samples</td><td>"
         "</td><td></td>";
  for (const Column& c : cmp.columns) {
    std::optional<double> n = c.value(summary_tag::kTimeToFirstToken, summary_key::kCount);
    if (!n) n = c.value(summary_tag::kRequestLatency, summary_key::kCount);
    out << "<td>" << (n ? "n=" + number(*n) : "-") << "</td>";
  }
  out << "</tr>";
  for (const Row& r : headline_rows(cmp.columns)) {
    out << "<tr class=\"metric-row\"><td class=\"text\" title=\"" << escape(r.tag) << " "
        << escape(r.stat) << "\">" << escape(r.name) << "</td><td class=\"text\">" << escape(r.unit)
        << "</td><td class=\"text\">" << to_string(r.better) << "</td>";
    for (size_t i = 0; i < r.values.size(); ++i) {
      out << "<td>" << (r.values[i] ? number(*r.values[i]) : "-");
      if (i > 0 && r.diff_pct[i]) {
        const std::string j = judgement(r, i);
        out << "<span class=\"diff " << judgement_class(j) << "\">" << diff_text(r.diff_pct[i])
            << (j.empty() ? "" : " " + j) << "</span>";
      }
      out << "</td>";
    }
    out << "</tr>";
  }
  out << "</tbody></table></section>";
}

void distributions_section(std::ostringstream& out, const Comparison& cmp) {
  out << "<section id=\"distributions\"><h2>Latency distributions</h2><p class=\"muted\">"
         "Latency by percentile (p1 to p99 of each summary.json), one line per column.</p>"
         "<div class=\"charts\">";
  for (const auto& [tag, title] : kDistributionTags) {
    std::vector<chart::Line> lines;
    std::string unit = "ms";
    for (size_t i = 0; i < cmp.columns.size(); ++i) {
      const Column& c = cmp.columns[i];
      chart::Line line{c.name, colour(i), {}};
      for (const PercentileKey& p : kDistributionPercentiles) {
        if (auto v = c.value(tag, p.key)) line.points.emplace_back(p.percentile, *v);
      }
      if (auto it = c.metrics.find(tag); it != c.metrics.end()) unit = it->second.unit;
      if (!line.points.empty()) lines.push_back(std::move(line));
    }
    out << "<figure id=\"dist-" << tag << "\"><figcaption>" << title << "</figcaption>";
    if (lines.empty()) {
      out << "<p class=\"empty\">No column has this metric.</p>";
    } else {
      out << chart::line_svg(lines, std::string(title) + " by percentile", unit, "percentile",
                             {{}, true});
    }
    out << "</figure>";
  }
  out << "</div></section>";
}

void curve_section(std::ostringstream& out, const Comparison& cmp) {
  const Curve curve = throughput_latency_curve(cmp.columns, cmp.stages_mode);
  std::vector<chart::Line> lines;
  const bool one = curve.series.size() == 1;
  for (size_t i = 0; i < curve.series.size(); ++i) {
    const CurveSeries& s = curve.series[i];
    chart::Line p50{one ? "TTFT p50" : s.name + " p50", one ? colour(0) : colour(i), {}};
    chart::Line p99{one ? "TTFT p99" : s.name + " p99", one ? colour(1) : colour(i) + " dash", {}};
    for (const CurvePoint& p : s.points) {
      if (p.ttft_p50_ms) p50.points.emplace_back(p.x, *p.ttft_p50_ms);
      if (p.ttft_p99_ms) p99.points.emplace_back(p.x, *p.ttft_p99_ms);
    }
    if (!p50.points.empty()) lines.push_back(std::move(p50));
    if (!p99.points.empty()) lines.push_back(std::move(p99));
  }
  out << "<section id=\"curve\"><h2>Throughput and latency</h2><p class=\"muted\">TTFT p50 "
         "(solid) and p99 against <code>"
      << escape(curve.x_tag) << "</code>, one point per "
      << (cmp.stages_mode || !one ? "stage" : "run")
      << ". The knee is where latency climbs while throughput stops growing.</p>";
  if (lines.empty()) {
    out << "<p class=\"empty\">No TTFT to draw (no successful streamed request).</p>";
  } else {
    out << "<figure id=\"curve-chart\"><figcaption>TTFT against throughput</figcaption>"
        << chart::line_svg(lines, "TTFT against throughput", "ms", curve.x_unit, {{}, true})
        << "</figure>";
  }
  out << "</section>";
}

// "0" < "1" < "1+" < "2" ... < "31+": by number, a "+" after its number.
bool turn_label_less(const std::string& a, const std::string& b) {
  const int na = std::stoi(a);
  const int nb = std::stoi(b);
  if (na != nb) return na < nb;
  return a.size() < b.size();
}

void turns_section(std::ostringstream& out, const Comparison& cmp) {
  std::vector<std::string> labels;
  for (const Column& c : cmp.columns) {
    for (const TurnGroup& t : c.ttft_by_turn) {
      if (std::find(labels.begin(), labels.end(), t.label) == labels.end()) {
        labels.push_back(t.label);
      }
    }
  }
  std::sort(labels.begin(), labels.end(), turn_label_less);
  out << "<section id=\"turns\"><h2>TTFT by turn</h2>";
  if (labels.empty()) {
    out << "<p class=\"empty\">No TTFT by turn (no successful streamed request).</p></section>";
    return;
  }
  std::vector<chart::Line> series;
  for (size_t i = 0; i < cmp.columns.size(); ++i) {
    const Column& c = cmp.columns[i];
    chart::Line s{c.name, colour(i), {}};
    for (size_t g = 0; g < labels.size(); ++g) {
      double v = 0;
      for (const TurnGroup& t : c.ttft_by_turn) {
        if (t.label == labels[g] && std::isfinite(t.p50_ms)) v = t.p50_ms;
      }
      s.points.emplace_back(static_cast<double>(g), v);
    }
    series.push_back(std::move(s));
  }
  out << "<p class=\"muted\">p50 TTFT per turn index, from records.jsonl where the run kept it; "
         "otherwise first turn (0) and later turns (1+) from summary.json.</p><figure "
         "id=\"turns-chart\"><figcaption>TTFT p50 by turn</figcaption>"
      << chart::grouped_bars_svg(labels, series, "TTFT p50 by turn", "ms", "turn index")
      << "</figure><table><thead><tr><th class=\"text\">column</th><th class=\"text\">source"
         "</th>";
  for (const auto& l : labels) out << "<th>turn " << escape(l) << "</th>";
  out << "</tr></thead><tbody>";
  for (size_t i = 0; i < cmp.columns.size(); ++i) {
    out << "<tr><td class=\"text\">" << escape(cmp.columns[i].name) << "</td><td class=\"text\">"
        << escape(cmp.columns[i].ttft_by_turn_source) << "</td>";
    for (const auto& [g, v] : series[i].points)
      out << "<td>" << (v > 0 ? number(v) : "-") << "</td>";
    out << "</tr>";
  }
  out << "</tbody></table></section>";
}

void config_section(std::ostringstream& out, const Comparison& cmp) {
  const std::vector<ConfigDiff> diffs = config_differences(cmp.columns);
  out << "<section id=\"config\"><h2>Config differences</h2>";
  if (diffs.empty()) {
    out << "<p class=\"empty\">No config key differs from the baseline's.</p></section>";
    return;
  }
  out << "<p class=\"muted\">Keys of the resolved config"
      << (cmp.stages_mode ? " of each stage" : " (summary.json run.config_yaml)")
      << " whose value differs from the baseline's; highlighted where it does.</p><table>"
         "<thead><tr><th class=\"text\">key</th>";
  for (const Column& c : cmp.columns) out << "<th class=\"text\">" << escape(c.name) << "</th>";
  out << "</tr></thead><tbody>";
  for (const ConfigDiff& d : diffs) {
    out << "<tr class=\"config-row\"><td class=\"text\"><code>" << escape(d.key) << "</code></td>";
    for (const auto& v : d.values) {
      out << "<td class=\"text" << (v != d.values.front() ? " differs" : "") << "\">"
          << (v ? escape(*v) : "<span class=\"muted\">(none)</span>") << "</td>";
    }
    out << "</tr>";
  }
  out << "</tbody></table></section>";
}

}  // namespace

std::string compare_html(const Comparison& cmp) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         // The page must work offline; the policy makes any fetch fail loudly.
         "<meta http-equiv=\"Content-Security-Policy\" "
         "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
         "<title>convoy compare</title><style>"
      << kStyle << "</style></head><body><main>";
  header_section(out, cmp);
  table_section(out, cmp);
  distributions_section(out, cmp);
  curve_section(out, cmp);
  turns_section(out, cmp);
  config_section(out, cmp);
  out << "<footer>Generated by convoy " << escape(build_info::version())
      << " compare. Self-contained: this page loads nothing from the network.</footer>"
         "</main></body></html>\n";
  std::string page = out.str();
  sanitize_utf8_in_place(page);
  return page;
}

}  // namespace convoy::controller::compare
