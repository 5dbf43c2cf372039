// The live view's text, a pure function of what the run knows now: on a terminal a few lines
// redrawn in place (controller/run/terminal.hpp draws them), elsewhere one plain line. Every
// line fits the given width; nothing here reads a clock or writes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/run/live_window.hpp"

namespace convoy::controller {

// The stage running now (a run without stages is one stage named "measure").
struct ViewStage {
  StageConfig config;         // its level, its end (duration_s, requests or sessions)
  int count = 1;              // stages in the profile; 0: not known (a capacity search)
  int64_t start_ns = 0;       // the run's clock
  bool trace = false;         // load.mode trace: no level to show
  bool settling = false;      // it ended; its in-flight work finishes (load settle_s)
  int64_t requests_done = 0;  // measured requests of this stage so far
};

// A capacity search's bracket so far: the highest level that met the SLO, the lowest that
// missed it.
struct ViewBracket {
  std::optional<double> met;
  std::optional<double> missed;
};

struct ViewSnapshot {
  double elapsed_s = 0;                         // since the measure began
  std::optional<double> run_total_s;            // the profile's planned length, when time-bound
  std::optional<ViewStage> stage;               // none before the measure
  double stage_elapsed_s = 0;                   // since the stage began
  int64_t requests = 0;                         // measured requests ended (the run's one count)
  std::optional<int64_t> requests_total;        // load.requests
  int64_t conversations_done = 0;               // conversations ended
  std::optional<uint64_t> conversations_total;  // when the dataset is finite
  int64_t ok = 0;                               // measured requests without error
  int64_t failed = 0;                           // measured requests with one
  size_t in_flight = 0;                         // conversations running
  WindowStats window;                           // the last few seconds
  std::array<ErrorCount, LiveWindow::kTopErrors> errors{};  // the most frequent, most first
  std::optional<ViewBracket> bracket;                       // a capacity search's
};

// The terminal's lines (none ends in '\n'), each at most `width` columns (at least 40).
std::vector<std::string> render_live_view(const ViewSnapshot& s, int width);
// The plain line for logs and pipes, without '\n' and without escape sequences.
std::string render_plain_line(const ViewSnapshot& s);

// "1:05", "12:00:03": a duration for people, whole seconds.
std::string clock_text(double seconds);
// `line` cut to at most `width` columns (UTF-8 aware: one code point, one column).
std::string fit_width(const std::string& line, int width);

}  // namespace convoy::controller
