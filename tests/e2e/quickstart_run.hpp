// Shared by the e2e tests that run the quickstart config with overrides: the argv of
// `convoy run configs/quickstart.yaml -o OUT --quiet --set KEY=VALUE ...`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "e2e/subprocess.hpp"

namespace convoy::test {

// One `--set` for each of `sets` ("key.path=value"), in order.
inline std::vector<std::string> quickstart_run_argv(const std::filesystem::path& out,
                                                    const std::vector<std::string>& sets) {
  std::vector<std::string> argv = {bin("controller/convoy"),
                                   "run",
                                   src("configs/quickstart.yaml"),
                                   "-o",
                                   out.string(),
                                   "--quiet"};
  for (const std::string& set : sets) {
    argv.push_back("--set");
    argv.push_back(set);
  }
  return argv;
}

// The same run with its info lines ("measuring: ..."), which --quiet silences: for tests that
// wait for one of them.
inline std::vector<std::string> logged_quickstart_run_argv(const std::filesystem::path& out,
                                                           const std::vector<std::string>& sets) {
  std::vector<std::string> argv = quickstart_run_argv(out, sets);
  std::erase(argv, std::string("--quiet"));
  return argv;
}

}  // namespace convoy::test
