// The live view of a run. On a terminal (stderr is a tty): a few lines redrawn in place at most
// four times a second (the stage and its level, time left, requests ok and failed, req/s and
// output tok/s, TTFT and ITL p50/p99 over the last seconds, errors by kind, a search's
// bracket), with log lines printed above it. Otherwise: one plain line every kPlainPeriodNs.
// Writes to stderr so stdout stays the results.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>

#include "controller/config/config.hpp"
#include "controller/report/metrics.hpp"
#include "controller/run/live_view.hpp"
#include "controller/run/live_window.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

class TerminalView;

class Progress {
 public:
  Progress();
  // For tests: write to `out`, as a terminal `columns` wide (in-place redraws) or not
  // (periodic plain lines).
  Progress(std::FILE* out, bool tty, int columns = 80);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The measure begins: a run without stages is one stage, "measure", at `load`'s level.
  void begin(int64_t now_ns, std::optional<uint64_t> total_conversations, const LoadConfig& load);
  // A profile's stage starts (it replaces begin()'s "measure"); `count` stages in all, 0 when
  // not known (a capacity search).
  void set_stage(const StageConfig& stage, int count, int64_t start_ns);
  void stage_ended();  // its settle: no new conversation
  // A capacity search's bracket: the highest level that met the SLO, the lowest that missed.
  void set_bracket(std::optional<double> met, std::optional<double> missed);

  // O(1), no allocation: the record path is hot. `stage_index`: the record's stage (-1: none).
  void on_record(const proto::Record& r, const RequestMetrics& m, int stage_index);
  void on_conversation_end(proto::EndReason reason);

  // Draws when due: on a terminal at most every kRedrawPeriodNs, else every kPlainPeriodNs.
  // `measured_requests`: the run's one count (RecordPipeline::measured_requests()).
  void print(int64_t now_ns, size_t in_flight_conversations, int64_t measured_requests);
  // The run is over: the view is drawn a last time (on a terminal) and stays, nothing is drawn
  // again, and log lines go to stderr again. Call before the results print.
  void finish(int64_t now_ns, size_t in_flight_conversations, int64_t measured_requests);
  // The same without a last frame.
  void finish_line();

  // What the view shows now (for tests and the plain line).
  ViewSnapshot snapshot(int64_t now_ns, size_t in_flight, int64_t measured_requests) const;

  static constexpr int64_t kPlainPeriodNs = 5'000'000'000;
  static constexpr int64_t kRedrawPeriodNs = 250'000'000;

 private:
  std::FILE* out_;
  bool tty_;
  int columns_;                             // 0: ask the terminal at each redraw
  std::unique_ptr<TerminalView> terminal_;  // while the view is on screen
  bool started_ = false;
  bool finished_ = false;  // finish_line() was called: nothing more is drawn
  int64_t start_ns_ = 0;
  int64_t last_print_ns_ = 0;
  std::optional<uint64_t> total_conversations_;
  std::optional<int64_t> total_requests_;  // load.requests
  std::optional<double> run_total_s_;      // the profile's planned length, when time-bound
  std::optional<ViewStage> stage_;
  std::optional<ViewBracket> bracket_;
  int64_t conversations_done_ = 0;
  LiveWindow window_;
};

}  // namespace convoy::controller
