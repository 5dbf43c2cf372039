#include "controller/report/model_results.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include "controller/report/results_table.hpp"
#include "controller/report/svg_chart.hpp"

namespace convoy::controller {

namespace {

double models_total_weight(const MetricsSnapshot& s) {
  double total = 0;
  for (const auto& m : s.models) total += m.weight;
  return total;
}

// p50 (index 4 of kReportedPercentiles) or p99 (index 8) of a metric, when it has a value.
std::optional<double> model_pct(const std::optional<MetricStats>& m, std::size_t index) {
  if (!m || m->count == 0) return std::nullopt;
  return m->percentiles[index];
}
constexpr std::size_t kModelP50 = 4;  // kPercentileKeys: p50
constexpr std::size_t kModelP99 = 8;  // p99

std::string model_cell(std::optional<double> v, std::size_t width, int decimals = 2) {
  std::string text = v ? format_grouped(*v, decimals) : "-";
  return std::string(text.size() < width ? width - text.size() : 0, ' ') + text;
}

}  // namespace

void print_model_table(std::ostream& out, const MetricsSnapshot& s, std::size_t width) {
  if (s.models.empty()) return;
  constexpr std::size_t kCell = 10;
  constexpr std::size_t kColumns = 7;
  std::size_t name_width = 5;
  for (const auto& m : s.models) name_width = std::max(name_width, m.name.size());
  const std::size_t numbers = kColumns * (kCell + 1);
  name_width =
      std::min(name_width, std::max<std::size_t>(12, width > numbers ? width - numbers : 0));
  const double total = models_total_weight(s);
  auto left = [](std::string text, std::size_t w) {
    if (text.size() > w) text = text.substr(0, w > 1 ? w - 1 : 0) + "~";
    return text + std::string(w - text.size(), ' ');
  };
  out << "Per model (ms: p50)\n" << left("model", name_width);
  for (const char* h : {"share %", "requests", "errors", "TTFT", "ITL", "latency", "out tok/s"}) {
    const std::string head(h);
    out << ' ' << std::string(kCell - head.size(), ' ') << head;
  }
  out << '\n' << std::string(name_width + numbers, '-') << '\n';
  for (const auto& m : s.models) {
    out << left(m.name, name_width) << ' '
        << model_cell(total > 0 ? m.weight / total * 100 : 0, kCell) << ' '
        << model_cell(static_cast<double>(m.requests), kCell, 0) << ' '
        << model_cell(static_cast<double>(m.errors), kCell, 0) << ' '
        << model_cell(model_pct(m.ttft, kModelP50), kCell) << ' '
        << model_cell(model_pct(m.inter_token_latency, kModelP50), kCell) << ' '
        << model_cell(model_pct(m.request_latency, kModelP50), kCell) << ' '
        << model_cell(m.output_token_throughput, kCell) << '\n';
  }
}

std::string models_section_html(const MetricsSnapshot& s) {
  if (s.models.empty()) return "";
  using chart::escape;
  using chart::number;
  auto cell = [](std::optional<double> v) { return "<td>" + (v ? number(*v) : "-") + "</td>"; };
  const double total = models_total_weight(s);
  std::ostringstream out;
  out << "<section id=\"models\"><h2>Models</h2><table><thead><tr><th class=\"text\">model</th>"
         "<th>share %</th><th>requests</th><th>errors</th><th>TTFT p50 (ms)</th>"
         "<th>TTFT p99 (ms)</th><th>ITL p50 (ms)</th><th>ITL p99 (ms)</th>"
         "<th>latency p50 (ms)</th><th>output tokens/sec</th></tr></thead><tbody>";
  for (const auto& m : s.models) {
    out << "<tr><td class=\"text\">" << escape(m.name) << "</td>"
        << cell(total > 0 ? m.weight / total * 100 : 0) << "<td>" << m.requests << "</td><td>"
        << m.errors << "</td>" << cell(model_pct(m.ttft, kModelP50))
        << cell(model_pct(m.ttft, kModelP99)) << cell(model_pct(m.inter_token_latency, kModelP50))
        << cell(model_pct(m.inter_token_latency, kModelP99))
        << cell(model_pct(m.request_latency, kModelP50)) << cell(m.output_token_throughput)
        << "</tr>";
  }
  out << "</tbody></table><p class=\"muted\">Each conversation drew one model by weight and kept "
         "it for every turn; share is the configured weight.</p></section>";
  return out.str();
}

}  // namespace convoy::controller
