// Shared by the tests of the HTML pages (report.html, its Server section, compare.html): counting
// in a page's text, and the page rendered by headless Chromium (--dump-dom, --screenshot) with
// its console messages.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "test_util.hpp"

namespace convoy::test {

// How often `needle` starts in text[from, to).
inline size_t count_of(const std::string& text, const std::string& needle, size_t from = 0,
                       size_t to = std::string::npos) {
  size_t n = 0;
  for (size_t at = text.find(needle, from); at != std::string::npos && at < to;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The x coordinates of the first <polyline> at or after `from` in an SVG chart.
inline std::vector<double> polyline_xs(const std::string& html, size_t from) {
  std::vector<double> xs;
  const size_t at = html.find("<polyline ", from);
  if (at == std::string::npos) return xs;
  const size_t begin = html.find("points=\"", at) + 8;
  const size_t end = html.find('"', begin);
  std::istringstream in(html.substr(begin, end - begin));
  for (std::string point; in >> point;) xs.push_back(std::stod(point.substr(0, point.find(','))));
  return xs;
}

inline constexpr const char* kChromium = "/usr/bin/chromium";  // scripts/setup installs it

// True, after saying so, when Chromium is not installed: the caller then checks nothing.
inline bool chromium_missing() {
  if (std::filesystem::exists(kChromium)) return false;
  MESSAGE("skipped: ", kChromium, " is not installed (scripts/setup installs it)");
  return true;
}

inline std::string shell_quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// What one headless Chromium run left: its exit status, stdout (the DOM, with --dump-dom) and
// stderr (the console, with --enable-logging=stderr).
struct ChromiumRun {
  int rc = -1;
  std::string out;
  std::string log;
};

// Runs headless Chromium on `page` with `action` flags (e.g. "--dump-dom"), bounded to 60 s, with
// a fresh profile under `work`; stdout and stderr go to the named files (kept for a developer to
// look at) and are read back.
inline ChromiumRun run_chromium(const std::filesystem::path& work,
                                const std::filesystem::path& page, const std::string& action,
                                const std::filesystem::path& stdout_path,
                                const std::filesystem::path& stderr_path) {
  const std::filesystem::path profile = work / ("profile-" + stdout_path.stem().string());
  std::error_code ignored;
  std::filesystem::remove_all(profile, ignored);
  const std::string command =
      std::string("timeout -k 5 60 ") + kChromium +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --disable-default-apps --disable-extensions --no-default-browser-check"
      " --user-data-dir=" +
      shell_quoted(profile) + " " + action + " 'file://" + page.string() + "' >" +
      shell_quoted(stdout_path) + " 2>" + shell_quoted(stderr_path);
  ChromiumRun run;
  run.rc = std::system(command.c_str());
  std::filesystem::remove_all(profile, ignored);
  run.out = read_file(stdout_path);
  run.log = read_file(stderr_path);
  return run;
}

// `page` rendered at `window_size` ("1280,2000"): a screenshot in `shot`, the DOM in `dom_path`,
// the console in `log_path`. Checks that Chromium exited 0 and drew a real image (over 20 kB).
inline ChromiumRun render_page(const std::filesystem::path& work, const std::filesystem::path& page,
                               const std::string& window_size, const std::filesystem::path& shot,
                               const std::filesystem::path& dom_path,
                               const std::filesystem::path& log_path) {
  std::error_code ignored;
  std::filesystem::remove(shot, ignored);
  ChromiumRun run = run_chromium(work, page,
                                 "--enable-logging=stderr --v=0 --window-size=" + window_size +
                                     " --screenshot=" + shell_quoted(shot) + " --dump-dom",
                                 dom_path, log_path);
  CAPTURE(run.log);
  CHECK(run.rc == 0);
  REQUIRE(std::filesystem::exists(shot));
  CHECK(std::filesystem::file_size(shot) > 20'000);
  return run;
}

// The lines of Chromium's log (--enable-logging=stderr) that say the page went wrong: console
// messages, uncaught exceptions, Content Security Policy refusals, failed loads.
inline std::vector<std::string> console_problems(const std::string& log) {
  std::vector<std::string> problems;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos ||
        line.find("Content Security Policy") != std::string::npos ||
        line.find("net::ERR_") != std::string::npos) {
      problems.push_back(line);
    }
  }
  return problems;
}

}  // namespace convoy::test
