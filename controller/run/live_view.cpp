#include "controller/run/live_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "controller/report/results_table.hpp"

namespace convoy::controller {

namespace {

constexpr const char* kViewGap = "  ";

// A latency in ms with about three significant digits.
std::string ms_text(std::optional<double> ms) {
  if (!ms) return "-";
  char buf[32];
  const char* format = *ms < 10 ? "%.2f" : (*ms < 100 ? "%.1f" : "%.0f");
  std::snprintf(buf, sizeof buf, format, *ms);
  return buf;
}

std::string rate_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 100 ? "%.1f" : "%.0f", v);
  return buf;
}

std::string count_of(int64_t done, std::optional<int64_t> total) {
  std::string text = std::to_string(done);
  if (total) text += "/" + std::to_string(*total);
  return text;
}

// "stage 2/4 concurrency=8", "search step 3 concurrency=24", "stage 1/1 measure
// (concurrency 8)": the level in parentheses unless the name already says it.
std::string stage_text(const ViewStage& st, double stage_elapsed_s) {
  // A search's steps are made one by one: how many is not known.
  std::string text =
      st.count > 0 ? "stage " + std::to_string(st.config.index + 1) + "/" + std::to_string(st.count)
                   : "search step " + std::to_string(st.config.index + 1);
  text += " " + st.config.name;
  if (st.trace) return text + " (trace)";
  StageConfig now = st.config;  // a ramp's level where it is now
  LoadLevel& level = now.mode == LoadMode::kRate ? now.rate : now.concurrency;
  if (level.ramp && st.config.duration_s && *st.config.duration_s > 0) {
    const double at = level.at(std::clamp(stage_elapsed_s / *st.config.duration_s, 0.0, 1.0));
    level = LoadLevel{at, at, level.shape, false};
  }
  std::string level_text = stage_level_text(now);
  std::string as_name = level_text;
  if (auto space = as_name.find(' '); space != std::string::npos) as_name[space] = '=';
  if (as_name.rfind(st.config.name, 0) != 0) text += " (" + level_text + ")";
  return text;
}

// Time left, rounded up: "0:00 left" only once nothing is.
std::string left_text(double seconds) {
  return clock_text(std::ceil(std::max(0.0, seconds))) + " left";
}

// The stage's progress: "0:12/0:30, 0:18 left", "0:12, requests 45/100", "settling".
std::string stage_time_text(const ViewStage& st, double elapsed_s) {
  std::string text = clock_text(elapsed_s);
  if (st.settling) return text + ", settling";
  const StageConfig& c = st.config;
  if (c.duration_s) {
    text += "/" + clock_text(*c.duration_s) + ", " + left_text(*c.duration_s - elapsed_s);
  } else if (c.requests && st.count != 1) {
    text += ", requests " + count_of(st.requests_done, *c.requests);
  }
  return text;
}

std::string run_time_text(const ViewSnapshot& s) {
  std::string text = "run " + clock_text(s.elapsed_s);
  if (s.run_total_s) {
    text += "/" + clock_text(*s.run_total_s) + ", " + left_text(*s.run_total_s - s.elapsed_s);
  }
  return text;
}

std::string requests_text(const ViewSnapshot& s) {
  return "requests " + count_of(s.requests, s.requests_total) + ": " + std::to_string(s.ok) +
         " ok, " + std::to_string(s.failed) + " failed";
}

std::string conversations_text(const ViewSnapshot& s) {
  std::string text = "conversations " + std::to_string(s.conversations_done);
  if (s.conversations_total) text += "/" + std::to_string(*s.conversations_total);
  return text;
}

std::string ttft_text(const WindowStats& w) {
  return "TTFT p50 " + ms_text(w.ttft_p50_ms) + " ms p99 " + ms_text(w.ttft_p99_ms) + " ms";
}
std::string itl_text(const WindowStats& w) {
  return "ITL p50 " + ms_text(w.itl_p50_ms) + " ms p99 " + ms_text(w.itl_p99_ms) + " ms";
}
std::string throughput_text(const WindowStats& w) {
  return rate_text(w.requests_per_s) + " req/s, " + rate_text(w.output_tokens_per_s) +
         " output tok/s";
}

std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", seconds);
  return buf;
}

std::string errors_text(const ViewSnapshot& s) {
  std::string text;
  for (const ErrorCount& e : s.errors) {
    if (e.count == 0) break;
    text += (text.empty() ? "errors: " : ", ") + std::to_string(e.count) + " " + error_label(e);
  }
  return text;
}

std::string bracket_text(const ViewBracket& b) {
  auto level = [](std::optional<double> v) {
    if (!v) return std::string("-");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *v);
    return std::string(buf);
  };
  return "search: SLO met at " + level(b.met) + ", missed at " + level(b.missed);
}

// The segments in order, two spaces apart, as many as fit `width` (the first, cut to fit,
// always): a narrow terminal loses the last segments, never a segment's middle.
std::string join_fitting(const std::vector<std::string>& segments, int width) {
  std::string line;
  for (const std::string& seg : segments) {
    if (seg.empty()) continue;
    if (line.empty()) {
      line = fit_width(seg, width);
      continue;
    }
    std::string next = line + kViewGap + seg;
    if (fit_width(next, width).size() < next.size()) break;
    line = std::move(next);
  }
  return line;
}

}  // namespace

std::string clock_text(double seconds) {
  const auto total = static_cast<int64_t>(std::max(0.0, std::floor(seconds)));
  char buf[32];
  if (total >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(total / 3600),
                  static_cast<long long>(total / 60 % 60), static_cast<long long>(total % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  }
  return buf;
}

std::string fit_width(const std::string& line, int width) {
  int columns = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if ((c & 0xc0) == 0x80) continue;  // a continuation byte: same column
    if (++columns > width) return line.substr(0, i);
  }
  return line;
}

std::vector<std::string> render_live_view(const ViewSnapshot& s, int width) {
  width = std::max(width, 40);
  std::vector<std::string> head;
  if (s.stage) {
    head = {stage_text(*s.stage, s.stage_elapsed_s), stage_time_text(*s.stage, s.stage_elapsed_s)};
    if (s.stage->count != 1) head.push_back(run_time_text(s));
  } else {
    head = {"starting", run_time_text(s)};
  }
  if (s.conversations_total) head.push_back(conversations_text(s));
  const WindowStats& w = s.window;
  std::vector<std::string> lines = {
      join_fitting(head, width),
      join_fitting({requests_text(s), "in flight " + std::to_string(s.in_flight),
                    rate_text(w.requests_per_s) + " req/s",
                    rate_text(w.output_tokens_per_s) + " output tok/s"},
                   width),
      join_fitting(
          {ttft_text(w), itl_text(w), "(last " + seconds_text(std::max(1.0, w.seconds)) + " s)"},
          width)};
  if (std::string errors = errors_text(s); !errors.empty()) {
    lines.push_back(fit_width(errors, width));
  }
  if (s.bracket) lines.push_back(fit_width(bracket_text(*s.bracket), width));
  return lines;
}

std::string render_plain_line(const ViewSnapshot& s) {
  char head[32];
  std::snprintf(head, sizeof head, "[%7.1fs]", s.elapsed_s);
  std::string line = head;
  if (s.stage) {
    line += " " + stage_text(*s.stage, s.stage_elapsed_s) + " " +
            stage_time_text(*s.stage, s.stage_elapsed_s);
  }
  line += " | " + requests_text(s) + " | in flight " + std::to_string(s.in_flight) + " | " +
          conversations_text(s) + " | " + throughput_text(s.window) + " | " + ttft_text(s.window) +
          " | " + itl_text(s.window) + " (last " + seconds_text(std::max(1.0, s.window.seconds)) +
          " s)";
  if (std::string errors = errors_text(s); !errors.empty()) line += " | " + errors;
  if (s.bracket) line += " | " + bracket_text(*s.bracket);
  return line;
}

}  // namespace convoy::controller
