// records.jsonl: one JSON line per request, streamed to disk as results arrive.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <rapidjson/stringbuffer.h>

#include "proto/messages.hpp"

namespace convoy::controller {

// One line (without the newline): x_request_id, x_correlation_id, conversation_id,
// conversation_index, turn_index, final_turn, worker_id, host, phase ("warmup" | "measure"),
// intended_ns, sent_ns, first_byte_ns, first_token_ns, second_token_ns, last_token_ns, end_ns
// (controller steady clock; null when it did not happen), metrics {ttft_ms, ttst_ms,
// request_latency_ms, itl_ms, schedule_lag_ms, corrected_request_latency_ms, isl, osl,
// cached_tokens} (null where not measured), http_status, error {kind, code, type, message}
// (null when ok), session_control (the object as sent; null when none).
std::string record_json_line(const proto::Record& record, std::string_view worker_id,
                             std::string_view host);

class RecordsWriter {
 public:
  static constexpr size_t kFlushBytes = 256 * 1024;

  // Creates or truncates `path`; throws std::runtime_error when it cannot.
  explicit RecordsWriter(const std::filesystem::path& path);
  ~RecordsWriter();
  RecordsWriter(RecordsWriter&&) noexcept = default;
  RecordsWriter& operator=(RecordsWriter&& other) noexcept;  // closes this one first

  // Buffers one line; writes the buffer out once it holds kFlushBytes.
  void write(const proto::Record& record, std::string_view worker_id, std::string_view host = {});
  // Writes the buffer out; the run loop calls this periodically (e.g. every second).
  void flush();
  // Flushes and closes; later writes are dropped. Called by the destructor.
  void close();

  int64_t lines() const { return lines_; }
  // A write failed (disk full, ...): the failure is kept as a value, the run goes on.
  bool failed() const { return failed_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const noexcept { std::fclose(file); }
  };

  std::filesystem::path path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  rapidjson::StringBuffer buffer_;   // lines not yet written out
  rapidjson::StringBuffer scratch_;  // session_control re-serialised, reused across lines
  int64_t lines_ = 0;
  bool failed_ = false;
};

}  // namespace convoy::controller
