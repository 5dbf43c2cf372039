#include "common/log.hpp"

#include <unistd.h>

#include <atomic>
#include <mutex>

#include "common/log_sink.hpp"
#include "common/utf8.hpp"

namespace convoy {

namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::mutex g_mutex;  // guards g_prefix and g_sink and keeps lines whole
std::string g_prefix = "convoy";
LogSink g_sink;  // empty: stderr

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

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
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
  if (g_sink) {
    g_sink(line);
    return;
  }
  // One write per line so lines from several processes sharing stderr do not interleave.
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, line.data(), line.size());
}

std::string log_escape(std::string_view text, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string_view shown = text.substr(0, max_bytes);
  std::string out;
  out.reserve(shown.size() + 16);
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0x0f];
  };
  size_t i = 0;
  while (i < shown.size()) {
    // Where the next ill-formed byte is (a sequence cut at max_bytes counts as ill-formed).
    size_t bad = find_invalid_utf8(shown.substr(i));
    const size_t good_end = bad == std::string_view::npos ? shown.size() : i + bad;
    for (; i < good_end; ++i) {
      const auto c = static_cast<unsigned char>(shown[i]);
      if (c == '\\') {
        out += "\\\\";
      } else if (c < 0x20 || c == 0x7f) {
        escape(c);
      } else {
        out += shown[i];
      }
    }
    if (i < shown.size()) escape(static_cast<unsigned char>(shown[i++]));
  }
  if (text.size() > max_bytes) out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace convoy
