#include "controller/run/terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

namespace convoy::controller {

std::string TerminalView::erase_sequence() const {
  if (frame_lines_ == 0) return "";
  // To the first column, up to the frame's first line, erase from there to the screen's end.
  return "\r\033[" + std::to_string(frame_lines_) + "A\033[J";
}

void TerminalView::write(const std::string& bytes) {
  std::fwrite(bytes.data(), 1, bytes.size(), out_);
  std::fflush(out_);
}

void TerminalView::draw(const std::vector<std::string>& lines) {
  std::string frame;
  for (const std::string& line : lines) {
    frame += line;
    frame += '\n';
  }
  std::lock_guard lock(mutex_);
  std::string bytes = erase_sequence() + frame;
  frame_ = std::move(frame);
  frame_lines_ = lines.size();
  write(bytes);
}

void TerminalView::print_above(std::string_view text) {
  std::lock_guard lock(mutex_);
  std::string bytes = erase_sequence();
  bytes += text;
  if (!text.empty() && text.back() != '\n') bytes += '\n';
  if (frame_lines_ > 0) bytes += frame_;
  write(bytes);
}

void TerminalView::release() {
  std::lock_guard lock(mutex_);
  frame_lines_ = 0;
  frame_.clear();
}

int terminal_columns(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}

}  // namespace convoy::controller
