// What `convoy compare` prints and writes: the console table, compare.json and compare.html
// (self-contained, SVG charts from the report room's svg_chart). Pure text from a Comparison.
#pragma once

#include <array>
#include <string>
#include <utility>

#include "controller/compare/run_loader.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/summary_keys.hpp"

namespace convoy::controller::compare {

// The headline metrics side by side (every column after the first with its relative difference
// from the baseline and whether that is better or worse), then the config keys that differ.
std::string console_table(const Comparison& cmp);

// compare.json: columns, metrics[] (values, diff_pct, judgement), distributions, curve,
// ttft_by_turn, config_differences (docs/compare.md).
std::string compare_json(const Comparison& cmp);

// compare.html: one page, no script, nothing fetched (Content-Security-Policy default-src 'none').
std::string compare_html(const Comparison& cmp);

// The percentile keys a latency distribution is drawn from, with their percentile.
struct PercentileKey {
  const char* key;
  double percentile;
};
// summary.json's percentile keys (metrics.hpp: kPercentileKeys, kReportedPercentiles).
inline constexpr auto kDistributionPercentiles = [] {
  std::array<PercentileKey, kReportedPercentiles.size()> keys{};
  for (size_t i = 0; i < keys.size(); ++i) {
    keys[i] = {controller::kPercentileKeys[i], kReportedPercentiles[i]};
  }
  return keys;
}();
// The latency distributions compared: tag and title.
inline constexpr std::pair<const char*, const char*> kDistributionTags[] = {
    {summary_tag::kTimeToFirstToken, "Time to first token"},
    {summary_tag::kInterTokenLatency, "Inter-token latency"},
    {summary_tag::kRequestLatency, "Request latency"}};

}  // namespace convoy::controller::compare
