// What a binary knows about its own build: the version (project(VERSION) in the top
// CMakeLists.txt) and the git commit it was built from. Defined in a file generated at build
// time (cmake/ConvoyVersion.cmake); link convoy::build_info.
#pragma once

#include <string>
#include <string_view>

namespace convoy::build_info {

const char* version();     // "0.1.0"
const char* git_commit();  // the short commit ("abc1234"), or "unknown" outside a git checkout

// What --version prints: "convoy-worker 0.1.0 (git abc1234)".
inline std::string version_line(std::string_view program) {
  return std::string(program) + " " + version() + " (git " + git_commit() + ")";
}

}  // namespace convoy::build_info
