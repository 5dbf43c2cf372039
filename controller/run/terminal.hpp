// Draws the live view in place on a terminal (ANSI cursor movement, no library) and prints
// other lines above it: the frame is erased, the line written, the frame drawn again, in one
// write, so that a log line is never glued to the view. Thread-safe: log lines come from any
// thread (common/log's sink), frames from the run loop.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::controller {

class TerminalView {
 public:
  explicit TerminalView(std::FILE* out) : out_(out) {}
  TerminalView(const TerminalView&) = delete;
  TerminalView& operator=(const TerminalView&) = delete;

  // Replaces the frame on screen with `lines` (none ending in '\n', each narrower than the
  // terminal: a wrapped line would throw the erase off).
  void draw(const std::vector<std::string>& lines);
  // Prints `text` (whole lines, ending in '\n') above the frame.
  void print_above(std::string_view text);
  // The frame stays on screen as it is; what follows prints below it and nothing is erased.
  void release();

 private:
  // The sequence that erases the frame on screen (the cursor rests on the line below it).
  std::string erase_sequence() const;
  void write(const std::string& bytes);

  std::mutex mutex_;  // guards everything below and keeps one write whole
  std::FILE* out_;
  std::string frame_;       // the frame's lines, each ending in '\n'
  size_t frame_lines_ = 0;  // lines of frame_ on screen (0: none, or released)
};

// The terminal's width in columns (TIOCGWINSZ on `fd`); 0 when `fd` is not a terminal.
int terminal_columns(int fd);

}  // namespace convoy::controller
