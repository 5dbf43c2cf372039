#include "controller/config/load_profile.hpp"

#include <algorithm>
#include <cmath>

#include "controller/config/yaml_util.hpp"

namespace convoy {

double LoadLevel::at(double fraction) const {
  if (!ramp) return from;
  const double f = std::clamp(fraction, 0.0, 1.0);
  if (shape == RampShape::kLinear || from == 0 || to == 0) return from + (to - from) * f;
  // Geometric: equal ratios in equal times (validation keeps from and to of one sign).
  return from * std::pow(to / from, f);
}

std::string stage_value_name(LoadMode vary, double value) {
  const char* what = vary == LoadMode::kRate ? "rate" : "concurrency";
  return std::string(what) + "=" + yaml_util::format_number(value);
}

StageConfig search_step(const LoadConfig& load, double value, int index) {
  const SearchConfig search = load.search.value_or(SearchConfig{});
  StageConfig s;
  s.index = index;
  s.mode = search.vary == LoadMode::kRate ? LoadMode::kRate : LoadMode::kConcurrency;
  s.arrival = load.arrival;
  s.burstiness = load.burstiness;
  if (s.mode == LoadMode::kConcurrency) {
    value = std::max(1.0, std::round(value));
    s.concurrency = LoadLevel{value, value, RampShape::kLinear, false};
    s.rate = LoadLevel{load.rate, load.rate, RampShape::kLinear, false};
  } else {
    const auto cap = static_cast<double>(load.concurrency);
    s.concurrency = LoadLevel{cap, cap, RampShape::kLinear, false};
    s.rate = LoadLevel{value, value, RampShape::kLinear, false};
  }
  s.value = value;
  s.name = stage_value_name(s.mode, value);
  s.duration_s = search.step_duration_s;
  s.requests = search.step_requests;
  s.settle_s = search.settle_s;
  return s;
}

std::vector<std::string> known_slo_statistics() {
  // summary.json's statistic keys (controller/report/summary_writer.cpp), less std/count/sum.
  return {"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"};
}

}  // namespace convoy
