// One JSON Lines output file streamed during a run (records.jsonl, profile_export.jsonl,
// server_metrics.jsonl) and the one failure contract they share. A failure to write (disk full,
// I/O error, the file or its folder removed during the run) is a value, never an exception:
//   - the first failure is remembered (the step and the OS error), later ones are not;
//   - it is reported once on the log, when it happens, naming the file and what follows;
//   - later lines are dropped and counted, the run goes on;
//   - the file never ends in a partial line: it is cut back to the last whole one;
//   - failure() names the file and what is lost, and the run report turns it into exit 3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/stringbuffer.h>

#include "controller/report/output_file.hpp"

namespace convoy::controller {

class JsonlWriter {
 public:
  // Creates or truncates `path`; throws std::runtime_error naming it and the OS error. `unit`
  // names what a line is in messages ("records", "scrapes"). Lines are buffered until the
  // buffer holds `flush_bytes`; with 0 each line is written as it comes (a line that reaches
  // the threshold on its own goes out with one writev(2), never copied: a scrape's line is
  // hundreds of KB).
  JsonlWriter(const std::filesystem::path& path, std::string unit, size_t flush_bytes);
  ~JsonlWriter();
  JsonlWriter(JsonlWriter&& other) noexcept;
  JsonlWriter& operator=(JsonlWriter&& other) noexcept;  // closes this one first
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  // One line (valid UTF-8, no newline); the newline is added.
  void write_line(std::string_view line);
  // One line that `append(rapidjson::StringBuffer&)` writes straight into the buffer (no copy),
  // without its newline. Not called once the file is closed or has failed.
  template <class Append>
  void append_line(Append&& append) {
    if (!begin_line()) return;
    append(buffer_);
    end_line();
  }
  // Writes the buffer out; the run loop calls this periodically (e.g. every second).
  void flush();
  // Flushes, fsyncs and closes, then checks that `path` still names the file written (a folder
  // removed mid-run fails only here); later lines are dropped uncounted. Idempotent; called by
  // the destructor.
  void close();

  int64_t lines() const { return lines_; }      // lines given while the file was open
  int64_t written() const { return written_; }  // lines wholly in the file
  int64_t lost() const { return lines_ - written_; }
  bool failed() const { return !error_.empty(); }
  // The first failure: the step and the OS error ("write: No space left on device"); "" if none.
  const std::string& error() const { return error_; }
  // The failure as an output error (file, path, error, what is lost); nullopt when none.
  std::optional<OutputError> failure() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  bool begin_line();  // counts the line; false when it is to be dropped
  void end_line();    // its newline; flushes at the threshold
  void write_through(std::string_view line);
  // Keeps the first failure; `reached` is the part of the pending bytes that reached the file
  // (whole lines in it stay, a partial last one is cut off). Logs it once.
  void fail(std::string error, std::string_view reached);
  void fail_at_close(std::string error, bool removed);

  std::filesystem::path path_;
  std::string unit_;
  size_t flush_bytes_ = 0;
  FileDescriptor fd_;
  rapidjson::StringBuffer buffer_;  // whole lines not yet written out
  int64_t lines_ = 0;
  int64_t buffered_lines_ = 0;  // lines in buffer_
  int64_t written_ = 0;
  int64_t file_bytes_ = 0;  // bytes of whole lines in the file
  std::string error_;
  bool removed_ = false;      // the file itself is gone: nothing written survives
  bool unconfirmed_ = false;  // fsync or close failed: what was written may not be on disk
};

}  // namespace convoy::controller
