// server_metrics.jsonl: one JSON line per scrape, written as scrapes arrive. A write failure
// (disk full, I/O error, the folder removed) is kept as a value, as records.jsonl's is: later
// lines are dropped and counted, the run goes on, and the run turns failure() into exit 3. The
// file never ends in a partial line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "controller/report/output_file.hpp"

namespace convoy::telemetry {

class JsonlFile {
 public:
  // Creates or truncates `path`; throws std::runtime_error naming it and the OS error. `unit`
  // names what a line is in the failure message ("scrapes").
  JsonlFile(const std::filesystem::path& path, std::string unit);
  ~JsonlFile();
  JsonlFile(const JsonlFile&) = delete;
  JsonlFile& operator=(const JsonlFile&) = delete;

  // Writes `line` and a newline (one writev(2) when it can).
  void write_line(std::string_view line);
  // fsyncs and closes, then checks that `path` still names the file written. Later writes are
  // dropped. Called by the destructor.
  void close();

  int64_t lines() const { return lines_; }
  int64_t written() const { return written_; }
  std::optional<controller::OutputError> failure() const;

 private:
  void fail(std::string error);

  std::filesystem::path path_;
  std::string unit_;
  controller::FileDescriptor fd_;
  int64_t lines_ = 0;
  int64_t written_ = 0;
  int64_t bytes_ = 0;  // whole lines in the file
  std::string error_;
  bool closed_ = false;
};

}  // namespace convoy::telemetry
