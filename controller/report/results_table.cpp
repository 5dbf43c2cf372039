#include "controller/report/results_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <vector>

#include <sys/ioctl.h>
#include <unistd.h>

namespace convoy::controller {

namespace {

constexpr std::string_view kRows[] = {"time_to_first_token",
                                      "time_to_first_output_token",
                                      "time_to_first_token_first_turn",
                                      "time_to_first_token_later_turns",
                                      "time_to_second_token",
                                      "inter_token_latency",
                                      "inter_chunk_latency",
                                      "request_latency",
                                      "schedule_lag",
                                      "input_sequence_length",
                                      "output_sequence_length",
                                      "reasoning_token_count",
                                      "cached_tokens"};

constexpr size_t kNumberWidth = 12;
constexpr size_t kMinLabelWidth = 16;

struct ResultColumn {
  const char* name;
  double (*value)(const MetricStats&);
};
constexpr ResultColumn kResultColumns[] = {{"avg", [](const MetricStats& m) { return m.avg; }},
                                           {"min", [](const MetricStats& m) { return m.min; }},
                                           {"max", [](const MetricStats& m) { return m.max; }},
                                           {"p50", [](const MetricStats& m) { return m.p(50); }},
                                           {"p90", [](const MetricStats& m) { return m.p(90); }},
                                           {"p99", [](const MetricStats& m) { return m.p(99); }}};

std::string pad_right(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

std::string truncate(std::string s, size_t width) {
  if (s.size() <= width) return s;
  if (width <= 3) return s.substr(0, width);
  s.resize(width - 3);
  return s + "...";
}

}  // namespace

std::string format_grouped(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, std::fabs(value));
  std::string digits(buffer);
  const size_t point = std::min(digits.find('.'), digits.size());
  std::string out;
  for (size_t i = 0; i < point; ++i) {
    if (i > 0 && (point - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  out += digits.substr(point);
  // "-0.00" reads as noise: only show the sign when a digit survives rounding.
  const bool negative = value < 0 && out.find_first_of("123456789") != std::string::npos;
  return negative ? "-" + out : out;
}

size_t console_width_of(std::optional<size_t> tty_columns, const char* columns_env) {
  size_t width = kDefaultConsoleWidth;
  if (tty_columns && *tty_columns > 0) {
    width = *tty_columns;
  } else if (columns_env != nullptr && *columns_env != '\0') {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(columns_env, &end, 10);
    if (end != columns_env && *end == '\0' && v > 0 && v < 100000) width = static_cast<size_t>(v);
  }
  return std::max(width, kMinConsoleWidth);
}

size_t console_width() {
  std::optional<size_t> tty;
  winsize ws{};
  if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
      ws.ws_col > 0) {
    tty = ws.ws_col;
  }
  return console_width_of(tty, std::getenv("COLUMNS"));
}

void print_results_table(std::ostream& out, const MetricsSnapshot& s, size_t width) {
  std::vector<std::string> labels;
  std::vector<const MetricStats*> rows;
  for (std::string_view tag : kRows) {
    const MetricStats* m = s.find(tag);
    if (m == nullptr || m->count == 0) continue;
    // Without reasoning the time to first output token is the TTFT: one row says it.
    if (tag == "time_to_first_output_token" && s.total_reasoning_tokens == 0) continue;
    rows.push_back(m);
    labels.push_back(m->header + " (" + m->unit + ")");
  }
  size_t label_width = 6;
  for (const auto& l : labels) label_width = std::max(label_width, l.size());
  // Columns that do not fit the width go, in this order: p90, min, max; then the labels are
  // shortened. avg, p50 and p99 always stay.
  std::vector<ResultColumn> columns(std::begin(kResultColumns), std::end(kResultColumns));
  auto total = [&] { return label_width + columns.size() * (kNumberWidth + 1); };
  for (const char* drop : {"p90", "min", "max"}) {
    if (total() <= width) break;
    std::erase_if(columns, [&](const ResultColumn& c) { return std::string_view(c.name) == drop; });
  }
  if (total() > width) {
    const size_t numbers = columns.size() * (kNumberWidth + 1);
    label_width = std::max(kMinLabelWidth, width > numbers ? width - numbers : 0);
  }
  const size_t total_width = total();

  out << "convoy | LLM metrics\n";
  out << pad_right("Metric", label_width);
  for (const ResultColumn& c : columns) out << ' ' << pad_left(c.name, kNumberWidth);
  out << '\n' << std::string(total_width, '-') << '\n';
  for (size_t i = 0; i < rows.size(); ++i) {
    out << pad_right(truncate(labels[i], label_width), label_width);
    for (const ResultColumn& c : columns) {
      out << ' ' << pad_left(format_grouped(c.value(*rows[i])), kNumberWidth);
    }
    out << '\n';
  }
  if (!rows.empty()) out << std::string(total_width, '-') << '\n';

  out << "Output Token Throughput (tokens/sec): " << format_grouped(s.output_token_throughput)
      << '\n';
  out << "Request Throughput (requests/sec):    " << format_grouped(s.request_throughput) << '\n';
  if (s.has_slo) {
    out << "Goodput (requests/sec):               " << format_grouped(s.goodput) << " ("
        << s.good_request_count << " requests within slo)\n";
  }
  out << "Request Count:                        " << s.request_count;
  if (s.warmup_request_count > 0) out << " (+" << s.warmup_request_count << " warmup, excluded)";
  out << '\n';
  out << "Errors:                               " << s.error_request_count << " ("
      << format_grouped(s.error_rate() * 100, 1) << "%)\n";
  out << "Benchmark Duration (sec):             " << format_grouped(s.duration_s) << '\n';
}

namespace {

std::string level_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

// A percentile of a metric tag, NaN when the stage did not measure it (printed "n/a").
double stat(const MetricsSnapshot& s, std::string_view tag, double q) {
  const MetricStats* m = s.find(tag);
  if (m == nullptr || m->count == 0) return std::numeric_limits<double>::quiet_NaN();
  return m->p(q);
}

std::string slo_text(const StageFacts& stage) {
  if (!stage.slo_met) return "";
  if (*stage.slo_met) return "met";
  return "missed";
}

}  // namespace

std::string stage_level_text(const StageConfig& stage) {
  const bool rate = stage.mode == LoadMode::kRate;
  const LoadLevel& level = rate ? stage.rate : stage.concurrency;
  std::string text = rate ? "rate " : "concurrency ";
  if (level.ramp) {
    text += level_number(level.from) + "->" + level_number(level.to);
  } else {
    text += level_number(level.from);
  }
  if (rate) text += "/s";
  if (level.ramp && level.shape == RampShape::kExponential) text += " exponential";
  return text;
}

std::string stage_line(const StageFacts& stage) {
  const MetricsSnapshot& s = stage.metrics;
  std::string line = "stage " + stage.config.name + " (" + stage_level_text(stage.config) +
                     "): " + format_grouped(static_cast<double>(s.request_count), 0) +
                     " requests, " + format_grouped(s.request_throughput) + " req/s, " +
                     format_grouped(s.output_token_throughput) + " output tok/s, TTFT p50 " +
                     format_grouped(stat(s, "time_to_first_token", 50)) + " ms p99 " +
                     format_grouped(stat(s, "time_to_first_token", 99)) + " ms, ITL p99 " +
                     format_grouped(stat(s, "inter_token_latency", 99)) + " ms, " +
                     format_grouped(static_cast<double>(s.error_request_count), 0) + " errors (" +
                     format_grouped(s.error_rate() * 100, 2) + "%)";
  if (stage.slo_met) {
    line += *stage.slo_met ? ", SLO met" : ", SLO missed";
    for (size_t i = 0; i < stage.slo_failures.size(); ++i) {
      line += (i == 0 ? ": " : "; ") + stage.slo_failures[i];
    }
  }
  return line;
}

namespace {

struct StageColumn {
  const char* name;
  double (*value)(const MetricsSnapshot&);
};
constexpr StageColumn kStageColumns[] = {
    {"requests", [](const MetricsSnapshot& s) { return static_cast<double>(s.request_count); }},
    {"errors", [](const MetricsSnapshot& s) { return static_cast<double>(s.error_request_count); }},
    {"req/s", [](const MetricsSnapshot& s) { return s.request_throughput; }},
    {"tok/s", [](const MetricsSnapshot& s) { return s.output_token_throughput; }},
    {"TTFT p50", [](const MetricsSnapshot& s) { return stat(s, "time_to_first_token", 50); }},
    {"TTFT p99", [](const MetricsSnapshot& s) { return stat(s, "time_to_first_token", 99); }},
    {"ITL p50", [](const MetricsSnapshot& s) { return stat(s, "inter_token_latency", 50); }},
    {"ITL p99", [](const MetricsSnapshot& s) { return stat(s, "inter_token_latency", 99); }}};

}  // namespace

void print_stage_table(std::ostream& out, std::span<const StageFacts> stages, size_t width) {
  if (stages.empty()) return;
  constexpr size_t kMaxTextWidth = 32;
  constexpr size_t kWidth = 10;
  size_t name_width = 5;
  size_t level_width = 5;
  bool any_slo = false;
  for (const StageFacts& st : stages) {
    name_width = std::max(name_width, std::min(st.config.name.size(), kMaxTextWidth));
    level_width =
        std::max(level_width, std::min(stage_level_text(st.config).size(), kMaxTextWidth));
    any_slo = any_slo || st.slo_met.has_value();
  }
  // Columns that do not fit the width go, in this order: ITL p50, TTFT p50, errors, req/s; then
  // the stage names and levels are shortened (to 12 characters at least).
  std::vector<StageColumn> columns(std::begin(kStageColumns), std::end(kStageColumns));
  auto total = [&] {
    return name_width + 1 + level_width + columns.size() * (kWidth + 1) + (any_slo ? 8 : 0);
  };
  for (const char* drop : {"ITL p50", "TTFT p50", "errors", "req/s"}) {
    if (total() <= width) break;
    std::erase_if(columns, [&](const StageColumn& c) { return std::string_view(c.name) == drop; });
  }
  while (total() > width && (name_width > 12 || level_width > 12)) {
    (name_width >= level_width ? name_width : level_width) -= 1;
  }
  out << "convoy | stages (latencies in ms, tok/s = output tokens/s)\n";
  out << pad_right("stage", name_width) << ' ' << pad_right("level", level_width);
  for (const StageColumn& c : columns) out << ' ' << pad_left(c.name, kWidth);
  if (any_slo) out << "  " << pad_right("SLO", 6);
  out << '\n' << std::string(total(), '-') << '\n';
  for (const StageFacts& st : stages) {
    const MetricsSnapshot& s = st.metrics;
    out << pad_right(truncate(st.config.name, name_width), name_width) << ' '
        << pad_right(truncate(stage_level_text(st.config), level_width), level_width);
    for (const StageColumn& c : columns) {
      const bool count =
          std::string_view(c.name) == "requests" || std::string_view(c.name) == "errors";
      out << ' ' << pad_left(format_grouped(c.value(s), count ? 0 : 2), kWidth);
    }
    if (any_slo) out << "  " << slo_text(st);
    out << '\n';
  }
  out << std::string(total(), '-') << '\n';
}

void print_search_result(std::ostream& out, const SearchFacts& search) {
  const SearchConfig& c = search.config;
  const char* vary = to_string(c.vary);
  out << "Capacity search (" << vary << ", " << search.steps.size() << " steps): highest " << vary
      << " meeting the SLO: ";
  if (search.max_meeting_slo) {
    out << level_number(*search.max_meeting_slo);
  } else if (search.steps.empty()) {
    out << "none judged (the search was interrupted)";
  } else {
    out << "none (even low " << level_number(c.low) << " missed it)";
  }
  out << "; lowest failing: ";
  if (search.min_failing) {
    out << level_number(*search.min_failing);
  } else if (!search.complete) {
    out << "none judged (the search was interrupted)";
  } else {
    out << "none (even high " << level_number(c.high) << " met it)";
  }
  out << '\n';
}

void print_error_table(std::ostream& out, const MetricsSnapshot& s, size_t width) {
  if (s.errors.empty()) return;
  constexpr size_t kTypeWidth = 26;
  constexpr size_t kFixedWidth = 8 + 1 + 5 + 2 + kTypeWidth + 1;
  // The message takes what the width leaves (at least 20 characters), up to 60.
  const size_t kMessageWidth =
      std::clamp<size_t>(width > kFixedWidth ? width - kFixedWidth : 0, 20, 60);
  out << "Errors\n";
  out << pad_left("count", 8) << ' ' << pad_left("code", 5) << "  " << pad_right("type", kTypeWidth)
      << ' ' << "message\n";
  out << std::string(8 + 1 + 5 + 2 + kTypeWidth + 1 + kMessageWidth, '-') << '\n';
  for (const ErrorGroup& e : s.errors) {
    std::string message = e.message;
    std::replace(message.begin(), message.end(), '\n', ' ');
    out << pad_left(std::to_string(e.count), 8) << ' '
        << pad_left(e.code != 0 ? std::to_string(e.code) : "-", 5) << "  "
        << pad_right(truncate(e.type, kTypeWidth), kTypeWidth) << ' '
        << truncate(message, kMessageWidth) << '\n';
  }
}

}  // namespace convoy::controller
