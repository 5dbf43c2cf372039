#include "controller/report/output_file.hpp"

#include <fcntl.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "common/utf8.hpp"

namespace convoy::controller {

namespace {

// The names a run writes (run_report.cpp, records_writer.cpp); a previous run's copies are
// worth a warning, not a failure.
constexpr const char* kRunFiles[] = {"summary.json",
                                     "summary.csv",
                                     "records.jsonl",
                                     "report.html",
                                     "server_metrics.jsonl",
                                     "timeslices.csv",
                                     "profile_export_aiperf.json",
                                     "profile_export_aiperf.csv",
                                     "profile_export.jsonl"};

std::filesystem::path tmp_path_of(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  return tmp;
}

OutputError whole_file_error(const std::filesystem::path& path, std::string error) {
  return {path.filename().string(), path.string(), std::move(error), "the whole file"};
}

void remove_quietly(const std::filesystem::path& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

// Writes `content` to path.tmp and makes it durable; removes it again on failure.
std::optional<OutputError> stage(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path tmp = tmp_path_of(path);
  FileDescriptor fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) {
    const int err = errno;
    return whole_file_error(path, os_error("open " + tmp.filename().string(), err));
  }
  std::string error;
  int err = 0;
  if (write_all(fd.get(), content, &err) != content.size()) {
    error = os_error("write", err);
  } else if (::fsync(fd.get()) != 0) {
    error = os_error("fsync", errno);
  } else if (int close_err = fd.close_checked(); close_err != 0) {
    error = os_error("close", close_err);
  }
  if (error.empty()) return std::nullopt;
  fd.reset();
  remove_quietly(tmp);
  return whole_file_error(path, std::move(error));
}

std::optional<OutputError> commit(const std::filesystem::path& path) {
  const std::filesystem::path tmp = tmp_path_of(path);
  if (::rename(tmp.c_str(), path.c_str()) == 0) return std::nullopt;
  const int err = errno;
  remove_quietly(tmp);
  return whole_file_error(path, os_error("rename", err));
}

}  // namespace

std::string describe(const OutputError& e) {
  std::string text = "cannot write " + e.file + " (" + e.path + "): " + e.error;
  if (!e.missing.empty()) text += "; " + e.missing;
  return text;
}

std::string output_errors_json(const std::vector<OutputError>& errors) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  auto put = [&w](const char* key, const std::string& value) {
    w.Key(key);
    const std::string clean = sanitize_utf8(value);  // paths are bytes, JSON is UTF-8
    w.String(clean.c_str(), static_cast<rapidjson::SizeType>(clean.size()));
  };
  w.StartArray();
  for (const OutputError& e : errors) {
    w.StartObject();
    put("file", e.file);
    put("path", e.path);
    put("error", e.error);
    put("missing", e.missing);
    w.EndObject();
  }
  w.EndArray();
  return {sb.GetString(), sb.GetSize()};
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void FileDescriptor::reset() {
  if (fd_ >= 0) (void)::close(fd_);
  fd_ = -1;
}

int FileDescriptor::close_checked() {
  if (fd_ < 0) return 0;
  // close(2) is not retried on EINTR: on Linux the descriptor is gone either way.
  const int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0 ? 0 : errno;
}

size_t write_all(int fd, std::string_view data, int* error) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error) *error = errno;
      return done;
    }
    if (n == 0) {  // not expected for regular files; do not spin
      if (error) *error = EIO;
      return done;
    }
    done += static_cast<size_t>(n);
  }
  return done;
}

std::string os_error(std::string_view step, int error) {
  return std::string(step) + ": " + std::strerror(error);
}

std::optional<OutputError> write_file_atomically_or_error(const std::filesystem::path& path,
                                                          std::string_view content) {
  if (auto e = stage(path, content)) return e;
  return commit(path);
}

std::vector<OutputError> write_output_files(const std::filesystem::path& dir,
                                            const std::vector<OutputFile>& files,
                                            std::vector<OutputError> known) {
  std::vector<bool> failed(files.size(), false);
  // Every pass that adds a failure renders the survivors again; a pass adds at most one
  // failure per file, so there are at most files.size() + 1 passes.
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < files.size(); ++i) {
      if (failed[i]) continue;
      std::string content;
      try {
        content = files[i].render(known);
      } catch (const std::exception& e) {  // a bug, but the other files are still written
        failed[i] = true;
        known.push_back(whole_file_error(dir / files[i].name, std::string("render: ") + e.what()));
        again = true;
        continue;
      }
      if (auto e = stage(dir / files[i].name, content)) {
        failed[i] = true;
        known.push_back(std::move(*e));
        again = true;
      }
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (failed[i]) continue;
    if (auto e = commit(dir / files[i].name)) known.push_back(std::move(*e));
  }
  return known;
}

std::vector<std::string> previous_run_files(const std::filesystem::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const char* name : kRunFiles) {
    if (std::filesystem::exists(dir / name, ec)) found.emplace_back(name);
    if (std::filesystem::exists(tmp_path_of(dir / name), ec)) {
      found.push_back(tmp_path_of(name).string());
    }
  }
  return found;
}

}  // namespace convoy::controller
