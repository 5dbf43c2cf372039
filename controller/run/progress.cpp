#include "controller/run/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace convoy::controller {

Progress::Progress() : Progress(stderr, ::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::FILE* out, bool tty) : out_(out), tty_(tty) {}

void Progress::begin(int64_t now_ns, std::optional<uint64_t> total_conversations,
                     std::optional<int64_t> total_requests) {
  started_ = true;
  start_ns_ = now_ns;
  last_print_ns_ = now_ns;
  total_conversations_ = total_conversations;
  total_requests_ = total_requests;
}

void Progress::on_record(const proto::Record& r) {
  if (r.phase != proto::Phase::kMeasure) return;
  if (r.error.kind != proto::ErrorKind::kNone) ++errors_;
}

void Progress::on_conversation_end(proto::EndReason) { ++conversations_done_; }

void Progress::print(int64_t now_ns, size_t in_flight_conversations, int64_t measured_requests) {
  const int64_t requests = measured_requests;
  if (!started_) return;
  if (!tty_ && now_ns - last_print_ns_ < kPlainPeriodNs) return;
  double elapsed_s = static_cast<double>(now_ns - start_ns_) / 1e9;
  double window_s = static_cast<double>(now_ns - last_print_ns_) / 1e9;
  double rps = window_s > 0 ? static_cast<double>(requests - last_requests_) / window_s : 0;
  last_print_ns_ = now_ns;
  last_requests_ = requests;
  char conv[64], req[64];
  if (total_conversations_) {
    std::snprintf(conv, sizeof conv, "%lld/%llu", static_cast<long long>(conversations_done_),
                  static_cast<unsigned long long>(*total_conversations_));
  } else {
    std::snprintf(conv, sizeof conv, "%lld", static_cast<long long>(conversations_done_));
  }
  if (total_requests_) {
    std::snprintf(req, sizeof req, "%lld/%lld", static_cast<long long>(requests),
                  static_cast<long long>(*total_requests_));
  } else {
    std::snprintf(req, sizeof req, "%lld", static_cast<long long>(requests));
  }
  std::fprintf(out_,
               "%s[%7.1fs] conversations %s  requests %s  %.1f req/s  errors %lld  in flight %zu%s",
               tty_ ? "\r\033[K" : "", elapsed_s, conv, req, rps, static_cast<long long>(errors_),
               in_flight_conversations, tty_ ? "" : "\n");
  std::fflush(out_);
  line_open_ = tty_;
}

void Progress::finish_line() {
  if (line_open_) {
    std::fputc('\n', out_);
    line_open_ = false;
  }
}

}  // namespace convoy::controller
