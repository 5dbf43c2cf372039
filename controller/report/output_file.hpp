// Writing the run's output files so that a failure (full disk, folder removed, I/O error) is a
// value the run reports and exits 3 on, never only a log line, and never a half-written file.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::controller {

// One output file that could not be written completely.
struct OutputError {
  std::string file;     // its name in the output folder, e.g. "records.jsonl"
  std::string path;     // the full path
  std::string error;    // the step and the OS error, e.g. "write: No space left on device"
  std::string missing;  // what is lost: "230 of 600 records lost (370 written)", "the whole file"
};

// "cannot write records.jsonl (DIR/records.jsonl): write: No space left on device; 230 of 600
// records lost (370 written)"
std::string describe(const OutputError& e);
// [{file, path, error, missing}], for summary.json's "output_errors".
std::string output_errors_json(const std::vector<OutputError>& errors);

// Move-only owner of a POSIX file descriptor (-1: none).
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { reset(); }
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();  // closes, ignoring the result (use close_checked where it matters)
  // Closes; the errno of a failed close(2), else 0.
  int close_checked();

 private:
  int fd_ = -1;
};

// Writes all of `data` to `fd` (retrying short writes and EINTR). Returns the bytes written; on
// failure `*error` (when given) holds errno, and the return value says how far it got.
size_t write_all(int fd, std::string_view data, int* error);

// "<step>: <strerror(error)>"
std::string os_error(std::string_view step, int error);

// Writes `content` to `path` through `path.tmp`: write, fsync, close, rename. On any failure the
// temporary is removed and the error returned; nothing is thrown.
std::optional<OutputError> write_file_atomically_or_error(const std::filesystem::path& path,
                                                          std::string_view content);

// One file of the final outputs, rendered from the failures known so far (the verdict in it must
// name them).
struct OutputFile {
  std::string name;  // in the output folder
  std::function<std::string(const std::vector<OutputError>&)> render;
};

// Writes `files` into `dir` so that no file claims more than the folder holds. Each goes to its
// `.tmp` first (write, fsync, close); when one fails, the others are rendered again with that
// failure known and rewritten; once a pass adds no failure the temporaries are renamed into
// place, in order (put summary.json last). A failed file leaves no `.tmp` behind. Returns
// `known` followed by the new failures.
std::vector<OutputError> write_output_files(const std::filesystem::path& dir,
                                            const std::vector<OutputFile>& files,
                                            std::vector<OutputError> known);

// The files a previous run left in `dir` (summary.json, records.jsonl, ..., and `.tmp`
// leftovers), by name; empty when there are none or `dir` does not exist.
std::vector<std::string> previous_run_files(const std::filesystem::path& dir);

}  // namespace convoy::controller
