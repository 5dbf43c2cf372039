#include "controller/telemetry/jsonl_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace convoy::telemetry {

JsonlFile::JsonlFile(const std::filesystem::path& path, std::string unit)
    : path_(path), unit_(std::move(unit)) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::runtime_error("cannot create " + path.string() + ": " +
                             controller::os_error("open", errno));
  }
  fd_ = controller::FileDescriptor(fd);
}

JsonlFile::~JsonlFile() { close(); }

void JsonlFile::fail(std::string error) {
  if (error_.empty()) error_ = std::move(error);
  // Cut back to the last whole line so that what is there parses.
  if (fd_) (void)::ftruncate(fd_.get(), static_cast<off_t>(bytes_));
}

void JsonlFile::write_line(std::string_view line) {
  ++lines_;
  if (!error_.empty() || closed_ || !fd_) return;
  // The line and its newline in one writev(2): a scrape's line is hundreds of KB, not copied.
  static constexpr char kNewline = '\n';
  iovec parts[2] = {{const_cast<char*>(line.data()), line.size()},
                    {const_cast<char*>(&kNewline), 1}};
  const size_t total = line.size() + 1;
  ssize_t n = 0;
  do {
    n = ::writev(fd_.get(), parts, 2);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    fail(controller::os_error("write", errno));
    return;
  }
  // A short write (not expected for a regular file): the rest as plain writes.
  size_t done = static_cast<size_t>(n);
  int error = 0;
  if (done < line.size()) {
    const size_t m = controller::write_all(fd_.get(), line.substr(done), &error);
    done += m;
    if (done < line.size()) {
      fail(controller::os_error("write", error));
      return;
    }
  }
  if (done < total && controller::write_all(fd_.get(), "\n", &error) != 1) {
    fail(controller::os_error("write", error));
    return;
  }
  bytes_ += static_cast<int64_t>(total);
  ++written_;
}

void JsonlFile::close() {
  if (closed_) return;
  closed_ = true;
  if (!fd_) return;
  struct stat written {};
  const bool have_stat = ::fstat(fd_.get(), &written) == 0;
  if (::fsync(fd_.get()) != 0 && error_.empty()) error_ = controller::os_error("fsync", errno);
  if (const int e = fd_.close_checked(); e != 0 && error_.empty()) {
    error_ = controller::os_error("close", e);
  }
  struct stat now {};
  if (error_.empty() && have_stat &&
      (::stat(path_.c_str(), &now) != 0 || now.st_ino != written.st_ino ||
       now.st_dev != written.st_dev)) {
    error_ = "the file was removed during the run";
    written_ = 0;
  }
}

std::optional<controller::OutputError> JsonlFile::failure() const {
  if (error_.empty()) return std::nullopt;
  controller::OutputError e;
  e.file = path_.filename().string();
  e.path = path_.string();
  e.error = error_;
  e.missing = std::to_string(lines_ - written_) + " of " + std::to_string(lines_) + " " + unit_ +
              " lost (" + std::to_string(written_) + " written)";
  return e;
}

}  // namespace convoy::telemetry
