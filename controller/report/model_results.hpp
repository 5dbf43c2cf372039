// target.models: the headline results per model, for the console and report.html (summary.json's
// "models" is session_routing_json.hpp's models_json). Nothing without target.models.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "controller/report/metrics.hpp"

namespace convoy::controller {

// "Per model": one row per model (share of conversations configured, requests, errors, TTFT,
// ITL and request latency p50 in ms, output tokens/sec), within `width` columns.
void print_model_table(std::ostream& out, const MetricsSnapshot& snapshot, std::size_t width);

// report.html's <section id="models">, the same columns with p99 as well; "" without models.
std::string models_section_html(const MetricsSnapshot& snapshot);

}  // namespace convoy::controller
