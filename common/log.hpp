// Minimal leveled logging to stderr, one line per call, safe to call from any thread.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace convoy {

enum class LogLevel { kDebug = 0, kInfo, kWarn, kError };

void set_log_level(LogLevel level);
LogLevel log_level();
// Prefix for every line, e.g. "convoy" or "worker w1".
void set_log_prefix(std::string prefix);
void log_line(LogLevel level, std::string_view message);

// Text a peer chose (a worker id, a hostname, a reject reason) made safe for one log line:
// printable ASCII and well-formed UTF-8 pass through; control bytes, invalid UTF-8 and '\' are
// written as \xNN (\\ for '\'); more than max_bytes is cut, saying how long it was.
std::string log_escape(std::string_view text, size_t max_bytes = 256);

namespace detail {
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

template <class... Args>
void log_debug(const Args&... args) {
  if (log_level() <= LogLevel::kDebug) log_line(LogLevel::kDebug, detail::concat(args...));
}
template <class... Args>
void log_info(const Args&... args) {
  if (log_level() <= LogLevel::kInfo) log_line(LogLevel::kInfo, detail::concat(args...));
}
template <class... Args>
void log_warn(const Args&... args) {
  if (log_level() <= LogLevel::kWarn) log_line(LogLevel::kWarn, detail::concat(args...));
}
template <class... Args>
void log_error(const Args&... args) {
  log_line(LogLevel::kError, detail::concat(args...));
}

}  // namespace convoy
