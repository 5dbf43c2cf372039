// Console tables after a run, laid out like AIPerf's.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <span>
#include <string>

#include "controller/report/metrics.hpp"
#include "controller/report/run_facts.hpp"

namespace convoy::controller {

inline constexpr size_t kDefaultConsoleWidth = 120;  // columns, when nothing says otherwise
inline constexpr size_t kMinConsoleWidth = 80;       // columns: the tables never go narrower

// Rows: TTFT (all, first turn, later turns), TTST, ITL, inter-chunk latency, request latency,
// schedule lag, ISL, OSL, cached tokens (each when measured); columns avg min max p50 p90 p99;
// then output token throughput, request throughput, goodput (with slo), request count, errors.
// The table fits `width` columns: p90, then min, then max are left out while it does not, then
// the metric names are shortened.
void print_results_table(std::ostream& out, const MetricsSnapshot& snapshot,
                         size_t width = kDefaultConsoleWidth);
// The error groups, largest first; nothing when there were no errors. The message column takes
// what `width` leaves (20 to 60 characters).
void print_error_table(std::ostream& out, const MetricsSnapshot& snapshot,
                       size_t width = kDefaultConsoleWidth);

// The width the console tables fit: the terminal's columns when stdout is a terminal
// (ioctl TIOCGWINSZ), else $COLUMNS, else kDefaultConsoleWidth; never below kMinConsoleWidth.
size_t console_width();
// The rule itself: `tty_columns` (nullopt: not a terminal) and the COLUMNS variable (may be null).
size_t console_width_of(std::optional<size_t> tty_columns, const char* columns_env);

// Load profiles. The level a stage ran at: "concurrency 8", "rate 2.5/s",
// "rate 10->200/s" (a linear ramp), "concurrency 1->64 exponential".
std::string stage_level_text(const StageConfig& stage);
// One console line as a stage ends (no newline): name, level, requests, req/s, output tok/s,
// TTFT p50/p99, ITL p99, errors, and for a search step whether it met the SLO. E.g.
// "stage 2 ramp (rate 10->200/s): 1,204 requests, 40.13 req/s, 2,048.50 output tok/s,
// TTFT p50 45.20 ms p99 120.00 ms, ITL p99 8.10 ms, 3 errors (0.25%)".
std::string stage_line(const StageFacts& stage);
// The per-stage table printed at the end of a profile run: one row per stage with its level,
// requests, errors, req/s, output tok/s, TTFT p50/p99, ITL p50/p99 and (search steps) the SLO.
// It fits `width`: ITL p50, then TTFT p50, errors and req/s are left out while it does not, then
// the stage names and levels are shortened.
void print_stage_table(std::ostream& out, std::span<const StageFacts> stages,
                       size_t width = kDefaultConsoleWidth);
// A capacity search's answer: the highest value that met the SLO and the lowest that failed.
void print_search_result(std::ostream& out, const SearchFacts& search);

// 1234567.891 -> "1,234,567.89" (decimals after the point).
std::string format_grouped(double value, int decimals = 2);

}  // namespace convoy::controller
