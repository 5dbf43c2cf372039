#include "controller/run/output_dir.hpp"

#include <ctime>

#include "common/log.hpp"
#include "controller/report/output_file.hpp"

namespace convoy::controller {

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

}  // namespace

std::string timestamp_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::filesystem::path make_output_dir(const Config& config,
                                      const std::optional<std::string>& override_dir) {
  std::string dir = override_dir.value_or(config.output.dir);
  dir = replace_all(dir, "{name}", config.name);
  dir = replace_all(dir, "{timestamp}", timestamp_text());
  std::filesystem::path out = dir;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw ConfigError("output.dir: cannot create " + dir + ": " + ec.message());
  if (const auto old = previous_run_files(out); !old.empty()) {
    std::string names;
    for (const auto& name : old) names += (names.empty() ? "" : ", ") + name;
    log_warn("output folder ", dir, " already holds a previous run's files (", names,
             "): this run overwrites those it writes; the others stay as they are");
  }
  return out;
}

}  // namespace convoy::controller
