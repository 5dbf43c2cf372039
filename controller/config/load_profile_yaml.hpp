// load.stages, load.sweep, load.search, load.abort_on and load.warmup_s: reading and
// validating them (file:line:key errors), expanding a sweep into stages, and writing them back
// as YAML. Private to controller/config/ (config.cpp's read_load and to_yaml call these).
#pragma once

#include <ostream>

#include "controller/config/config.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

// Reads the profile keys of the `load` section `s` into `l`, whose top-level keys (mode,
// concurrency, rate, arrival, burstiness, ends) are already read: they are the defaults every
// stage may omit. Sets l.profile, l.stages (resolved), l.sweep, l.search, l.abort_on and
// l.warmup_s; throws ConfigError.
void read_load_profile(const yaml_util::Section& s, LoadConfig& l);

// The same keys as YAML lines under `load:` (two-space indent), reading back the same.
void load_profile_yaml(std::ostream& y, const LoadConfig& l);

// The dotted paths of the keys under load.sweep, load.search and load.abort_on, for
// did-you-mean across sections.
void add_load_profile_paths(std::vector<std::string>& paths);

}  // namespace convoy::config_detail
