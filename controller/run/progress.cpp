#include "controller/run/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "common/log_sink.hpp"
#include "controller/run/terminal.hpp"

namespace convoy::controller {

namespace {

// A run without stages as the one stage the view shows.
ViewStage single_stage(const LoadConfig& load, int64_t start_ns) {
  ViewStage st;
  st.config.name = "measure";
  st.config.mode = load.mode;
  const auto c = static_cast<double>(load.concurrency);
  st.config.concurrency = LoadLevel{c, c, RampShape::kLinear, false};
  st.config.rate = LoadLevel{load.rate, load.rate, RampShape::kLinear, false};
  st.config.duration_s = load.duration_s;
  st.config.requests = load.requests;
  st.config.sessions = load.sessions;
  st.trace = load.mode == LoadMode::kTrace;
  st.start_ns = start_ns;
  return st;
}

// The profile's planned length: known when every stage ends on time.
std::optional<double> planned_seconds(const LoadConfig& load) {
  if (load.profile == ProfileKind::kSingle) return load.duration_s;
  if (load.profile == ProfileKind::kSearch) return std::nullopt;
  double total = 0;
  for (const StageConfig& s : load.stages) {
    if (!s.duration_s) return std::nullopt;
    total += *s.duration_s + s.settle_s;
  }
  return total;
}

}  // namespace

Progress::Progress() : Progress(stderr, ::isatty(STDERR_FILENO) == 1, 0) {}

Progress::Progress(std::FILE* out, bool tty, int columns)
    : out_(out), tty_(tty), columns_(columns) {}

Progress::~Progress() { finish_line(); }

void Progress::begin(int64_t now_ns, std::optional<uint64_t> total_conversations,
                     const LoadConfig& load) {
  started_ = true;
  start_ns_ = now_ns;
  last_print_ns_ = now_ns;
  total_conversations_ = total_conversations;
  total_requests_ = load.requests;
  run_total_s_ = planned_seconds(load);
  if (load.profile == ProfileKind::kSingle) stage_ = single_stage(load, now_ns);
  window_.begin(now_ns);
}

void Progress::set_stage(const StageConfig& stage, int count, int64_t start_ns) {
  stage_ = ViewStage{stage, count, start_ns, false, false, 0};
}

void Progress::stage_ended() {
  if (stage_) stage_->settling = true;
}

void Progress::set_bracket(std::optional<double> met, std::optional<double> missed) {
  bracket_ = ViewBracket{met, missed};
}

void Progress::on_record(const proto::Record& r, const RequestMetrics& m, int stage_index) {
  if (r.phase != proto::Phase::kMeasure) return;
  const bool failed = r.error.kind != proto::ErrorKind::kNone;
  window_.add(r.end_ns, !failed, m.osl, m.ttft_ns, m.itl_ns);
  if (failed) window_.add_error(r.error.kind, r.http_status);
  if (stage_ && stage_index == stage_->config.index) ++stage_->requests_done;
}

void Progress::on_conversation_end(proto::EndReason) { ++conversations_done_; }

ViewSnapshot Progress::snapshot(int64_t now_ns, size_t in_flight, int64_t measured_requests) const {
  ViewSnapshot s;
  s.elapsed_s = static_cast<double>(now_ns - start_ns_) / 1e9;
  s.run_total_s = run_total_s_;
  s.stage = stage_;
  if (stage_) s.stage_elapsed_s = static_cast<double>(now_ns - stage_->start_ns) / 1e9;
  s.requests = measured_requests;
  s.requests_total = total_requests_;
  s.conversations_done = conversations_done_;
  s.conversations_total = total_conversations_;
  s.ok = window_.ok_total();
  s.failed = window_.failed_total();
  s.in_flight = in_flight;
  s.window = window_.stats(now_ns);
  s.errors = window_.top_errors();
  s.bracket = bracket_;
  return s;
}

void Progress::print(int64_t now_ns, size_t in_flight_conversations, int64_t measured_requests) {
  if (!started_ || finished_) return;
  const bool first_frame = tty_ && !terminal_;
  if (!first_frame && now_ns - last_print_ns_ < (tty_ ? kRedrawPeriodNs : kPlainPeriodNs)) return;
  last_print_ns_ = now_ns;
  const ViewSnapshot s = snapshot(now_ns, in_flight_conversations, measured_requests);
  if (!tty_) {
    std::fprintf(out_, "%s\n", render_plain_line(s).c_str());
    std::fflush(out_);
    return;
  }
  if (first_frame) {
    terminal_ = std::make_unique<TerminalView>(out_);
    set_log_sink([view = terminal_.get()](std::string_view line) { view->print_above(line); });
  }
  int width = columns_ > 0 ? columns_ : terminal_columns(::fileno(out_));
  if (width <= 0) width = 80;
  // One column short of the edge: a line filling the last column would wrap on some terminals.
  terminal_->draw(render_live_view(s, width - 1));
}

void Progress::finish(int64_t now_ns, size_t in_flight_conversations, int64_t measured_requests) {
  if (terminal_ && !finished_) {
    last_print_ns_ = now_ns - kRedrawPeriodNs;  // due now
    print(now_ns, in_flight_conversations, measured_requests);
  }
  finish_line();
}

void Progress::finish_line() {
  finished_ = started_;
  if (!terminal_) return;
  set_log_sink({});  // returns once no log line is being printed above the view
  terminal_->release();
  terminal_.reset();
}

}  // namespace convoy::controller
