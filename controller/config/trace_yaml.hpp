// load.trace: reading and validating it (file:line:key errors) and writing it back as YAML.
// Private to controller/config/ (config.cpp's read_load and to_yaml call these).
#pragma once

#include <ostream>

#include "controller/config/config.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

// Reads load.trace of the `load` section `s` into l.trace; l.mode is already read. Throws
// ConfigError for a speedup <= 0, a negative offset or gap, end_offset_s <= start_offset_s, and
// for load.trace when load.mode is not trace (only a trace has timestamps to transform).
void read_trace(const yaml_util::Section& s, LoadConfig& l);

// "  trace: ..." under `load:`, reading back the same.
void trace_yaml(std::ostream& y, const LoadConfig& l);

}  // namespace convoy::config_detail
