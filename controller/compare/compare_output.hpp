// What `convoy compare` prints and writes: the console table, compare.json and compare.html
// (self-contained, SVG charts from the report room's svg_chart). Pure text from a Comparison.
#pragma once

#include <string>
#include <utility>

#include "controller/compare/run_loader.hpp"

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
inline constexpr PercentileKey kPercentileKeys[] = {{"p1", 1},   {"p5", 5},   {"p10", 10},
                                                    {"p25", 25}, {"p50", 50}, {"p75", 75},
                                                    {"p90", 90}, {"p95", 95}, {"p99", 99}};
// The latency distributions compared: tag and title.
inline constexpr std::pair<const char*, const char*> kDistributionTags[] = {
    {"time_to_first_token", "Time to first token"},
    {"inter_token_latency", "Inter-token latency"},
    {"request_latency", "Request latency"}};

}  // namespace convoy::controller::compare
