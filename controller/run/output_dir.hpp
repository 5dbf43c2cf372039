// The run's output folder: output.dir (or -o) with {name} and {timestamp} filled in, created,
// and a warning when it already holds a previous run's files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "controller/config/config.hpp"

namespace convoy::controller {

// Local time as YYYYMMDD-HHMMSS: the {timestamp} of output.dir and of the run id.
std::string timestamp_text();

// Creates the folder and returns it. Throws ConfigError (naming output.dir) when it cannot.
std::filesystem::path make_output_dir(const Config& config,
                                      const std::optional<std::string>& override_dir);

}  // namespace convoy::controller
