#include "common/log.hpp"

#include <unistd.h>

#include <atomic>
#include <mutex>

namespace convoy {

namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::mutex g_mutex;  // guards g_prefix and keeps lines whole
std::string g_prefix = "convoy";

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}
}  // namespace

void set_log_level(LogLevel level) { g_level = level; }
LogLevel log_level() { return g_level; }

void set_log_prefix(std::string prefix) {
  std::lock_guard lock(g_mutex);
  g_prefix = std::move(prefix);
}

void log_line(LogLevel level, std::string_view message) {
  std::lock_guard lock(g_mutex);
  std::string line;
  line.reserve(g_prefix.size() + message.size() + 16);
  line += g_prefix;
  line += ": ";
  line += level_name(level);
  line += ": ";
  line += message;
  line += '\n';
  // One write per line so lines from several processes sharing stderr do not interleave.
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace convoy
