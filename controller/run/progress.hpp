// The live progress line: redrawn in place on a terminal (at most 4 times a second), plain
// periodic lines otherwise. Writes to stderr so stdout stays the results.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>

#include "proto/messages.hpp"

namespace convoy::controller {

class Progress {
 public:
  Progress();
  // For tests: write to `out`, as a terminal (in-place redraws) or not (periodic lines).
  Progress(std::FILE* out, bool tty);
  void begin(int64_t now_ns, std::optional<uint64_t> total_conversations,
             std::optional<int64_t> total_requests);
  void on_record(const proto::Record& r);  // counts the measured errors

  void on_conversation_end(proto::EndReason reason);
  // Prints when due: every call on a terminal (the caller calls about once a second), every
  // kPlainPeriodNs otherwise.
  // `measured_requests`: the run's one count (RecordPipeline::measured_requests()).
  void print(int64_t now_ns, size_t in_flight_conversations, int64_t measured_requests);
  void finish_line();  // ends an in-place line before other output

  static constexpr int64_t kPlainPeriodNs = 5'000'000'000;

 private:
  std::FILE* out_;
  bool tty_;
  bool started_ = false;
  bool line_open_ = false;
  int64_t start_ns_ = 0;
  int64_t last_print_ns_ = 0;
  std::optional<uint64_t> total_conversations_;
  std::optional<int64_t> total_requests_;
  int64_t errors_ = 0;
  int64_t conversations_done_ = 0;
  int64_t last_requests_ = 0;
};

}  // namespace convoy::controller
