#include "controller/report/jsonl_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/log.hpp"

namespace convoy::controller {

JsonlWriter::JsonlWriter(const std::filesystem::path& path, std::string unit, size_t flush_bytes)
    : path_(path),
      unit_(std::move(unit)),
      flush_bytes_(flush_bytes),
      fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
  if (!fd_) {
    throw std::runtime_error("cannot create " + path.filename().string() + " (" + path.string() +
                             "): " + std::strerror(errno));
  }
}

JsonlWriter::~JsonlWriter() { close(); }

JsonlWriter::JsonlWriter(JsonlWriter&& other) noexcept
    : path_(std::move(other.path_)),
      unit_(std::move(other.unit_)),
      flush_bytes_(other.flush_bytes_),
      fd_(std::move(other.fd_)),
      buffer_(std::move(other.buffer_)),
      lines_(other.lines_),
      buffered_lines_(other.buffered_lines_),
      written_(other.written_),
      file_bytes_(other.file_bytes_),
      error_(std::move(other.error_)),
      removed_(other.removed_),
      unconfirmed_(other.unconfirmed_) {}

JsonlWriter& JsonlWriter::operator=(JsonlWriter&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    unit_ = std::move(other.unit_);
    flush_bytes_ = other.flush_bytes_;
    fd_ = std::move(other.fd_);
    buffer_ = std::move(other.buffer_);
    lines_ = other.lines_;
    buffered_lines_ = other.buffered_lines_;
    written_ = other.written_;
    file_bytes_ = other.file_bytes_;
    error_ = std::move(other.error_);
    removed_ = other.removed_;
    unconfirmed_ = other.unconfirmed_;
  }
  return *this;
}

bool JsonlWriter::begin_line() {
  if (!fd_) return false;  // closed
  ++lines_;
  return !failed();  // after a failure: counted as lost
}

void JsonlWriter::end_line() {
  buffer_.Put('\n');
  ++buffered_lines_;
  if (buffer_.GetSize() >= flush_bytes_) flush();
}

void JsonlWriter::write_line(std::string_view line) {
  if (!begin_line()) return;
  if (buffer_.GetSize() == 0 && line.size() + 1 >= flush_bytes_) {
    write_through(line);
    return;
  }
  std::copy(line.begin(), line.end(), buffer_.Push(line.size()));
  end_line();
}

// The line and its newline in one writev(2), then plain writes for what a short write left.
void JsonlWriter::write_through(std::string_view line) {
  static constexpr char kNewline = '\n';
  iovec parts[2] = {{const_cast<char*>(line.data()), line.size()},
                    {const_cast<char*>(&kNewline), 1}};
  ssize_t n = 0;
  do {
    n = ::writev(fd_.get(), parts, 2);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    fail(os_error("write", errno), {});
    return;
  }
  size_t done = static_cast<size_t>(n);
  int error = 0;
  if (done < line.size()) done += write_all(fd_.get(), line.substr(done), &error);
  if (done == line.size()) done += write_all(fd_.get(), "\n", &error);
  if (done < line.size() + 1) {
    fail(os_error("write", error), line.substr(0, std::min(done, line.size())));
    return;
  }
  ++written_;
  file_bytes_ += static_cast<int64_t>(done);
}

void JsonlWriter::flush() {
  if (!fd_ || failed() || buffer_.GetSize() == 0) return;
  const std::string_view pending(buffer_.GetString(), buffer_.GetSize());
  int err = 0;
  const size_t done = write_all(fd_.get(), pending, &err);
  if (done != pending.size()) {
    fail(os_error("write", err), pending.substr(0, done));
    return;
  }
  written_ += buffered_lines_;
  file_bytes_ += static_cast<int64_t>(done);
  buffered_lines_ = 0;
  buffer_.Clear();
}

void JsonlWriter::fail(std::string error, std::string_view reached) {
  if (failed()) return;
  error_ = std::move(error);
  // Whole lines that made it stay; a partial last line is cut off so every line parses.
  const size_t last_newline = reached.rfind('\n');
  const size_t whole = last_newline == std::string_view::npos ? 0 : last_newline + 1;
  written_ += static_cast<int64_t>(std::count(reached.begin(), reached.begin() + whole, '\n'));
  file_bytes_ += static_cast<int64_t>(whole);
  if (fd_ && whole != reached.size()) (void)::ftruncate(fd_.get(), file_bytes_);
  buffered_lines_ = 0;
  buffer_.Clear();
  log_error("cannot write ", path_.filename().string(), " (", path_.string(), "): ", error_, ": ",
            unit_, " from here on are lost; the run goes on and will exit 3");
}

// Found at close: the run is over, the report names it (no log line of its own).
void JsonlWriter::fail_at_close(std::string error, bool removed) {
  if (failed()) return;
  error_ = std::move(error);
  removed_ = removed;
  unconfirmed_ = !removed;
}

void JsonlWriter::close() {
  if (!fd_) return;
  flush();
  struct stat written_file {};
  const bool have_identity = ::fstat(fd_.get(), &written_file) == 0;
  if (!failed() && ::fsync(fd_.get()) != 0) fail_at_close(os_error("fsync", errno), false);
  if (const int err = fd_.close_checked(); err != 0) fail_at_close(os_error("close", err), false);
  if (failed() || !have_identity) return;
  // Writes to a file whose folder was removed succeed; only the name shows it is gone.
  struct stat now {};
  if (::stat(path_.c_str(), &now) != 0) {
    fail_at_close(os_error("the file was removed during the run", errno), true);
  } else if (now.st_dev != written_file.st_dev || now.st_ino != written_file.st_ino) {
    fail_at_close("the file was replaced by another during the run", true);
  }
}

std::optional<OutputError> JsonlWriter::failure() const {
  if (!failed()) return std::nullopt;
  OutputError e{path_.filename().string(), path_.string(), error_, ""};
  const std::string total = std::to_string(lines_);
  if (removed_) {
    e.missing = "all " + total + " " + unit_ + " lost (" + std::to_string(written_) +
                " were written to a file that is gone)";
  } else if (unconfirmed_) {
    e.missing = total + " " + unit_ + " written but not confirmed on disk";
  } else {
    e.missing = std::to_string(lost()) + " of " + total + " " + unit_ + " lost (" +
                std::to_string(written_) + " written)";
  }
  return e;
}

}  // namespace convoy::controller
