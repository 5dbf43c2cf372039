#include "controller/report/slo_check.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace convoy::controller {

namespace {

std::string number_text(double v) {
  std::ostringstream out;
  out.precision(4);
  out << v;
  return out.str();
}

// Per-user throughput is the one tag where more is better.
bool higher_is_better(std::string_view tag) { return tag == "output_token_throughput_per_user"; }

}  // namespace

std::optional<double> slo_statistic(const MetricStats& s, std::string_view statistic) {
  if (statistic == "avg") return s.avg;
  if (statistic == "min") return s.min;
  if (statistic == "max") return s.max;
  if (statistic == "std") return s.std;
  if (statistic.size() < 2 || statistic[0] != 'p') return std::nullopt;
  double q = 0;
  const char* first = statistic.data() + 1;
  const char* last = statistic.data() + statistic.size();
  auto [ptr, ec] = std::from_chars(first, last, q);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  const double v = s.p(q);
  if (std::isnan(v)) return std::nullopt;
  return v;
}

SloJudgement judge_slo(const SloSpec& slo, const MetricsSnapshot& m) {
  SloJudgement j;
  if (m.request_count == 0) j.failures.push_back("no successful request");
  for (const auto& [tag, limits] : slo.limits) {
    const MetricStats* s = m.find(tag);
    for (const auto& [statistic, limit] : limits) {
      const std::string what = tag + " " + statistic;
      if (!s || s->count == 0) {
        if (m.request_count > 0) j.failures.push_back(what + ": not measured");
        continue;
      }
      auto value = slo_statistic(*s, statistic);
      if (!value) {
        j.failures.push_back(what + ": statistic not available");
        continue;
      }
      const std::string unit = s->unit.empty() ? "" : " " + s->unit;
      if (higher_is_better(tag) ? *value < limit : *value > limit) {
        j.failures.push_back(what + " " + number_text(*value) + unit +
                             (higher_is_better(tag) ? " < " : " > ") + number_text(limit) + unit);
      }
    }
  }
  if (slo.error_rate && m.error_rate() > *slo.error_rate) {
    j.failures.push_back("error_rate " + number_text(m.error_rate()) + " > " +
                         number_text(*slo.error_rate));
  }
  j.met = j.failures.empty();
  return j;
}

}  // namespace convoy::controller
