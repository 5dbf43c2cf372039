// Where common/log's lines go instead of stderr while something owns the terminal's bottom
// lines (the controller's live view). Apart from log.hpp, which nearly every file includes.
#pragma once

#include <functional>
#include <string_view>

namespace convoy {

// The sink gets each whole line, ending in '\n', and prints it above what it draws. It is
// called under the log's lock, from whichever thread logs, so it must not log. An empty sink
// sends lines to stderr again.
using LogSink = std::function<void(std::string_view line)>;
void set_log_sink(LogSink sink);

}  // namespace convoy
