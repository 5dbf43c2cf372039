// load.warmup, load.mode users and load.prefill_concurrency: reading and checking them
// (file:line:key errors) and writing them back as YAML. Private to controller/config/
// (config.cpp's read_load and to_yaml call these).
#pragma once

#include <ostream>

#include "controller/config/config.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

// Reads load.warmup and load.prefill_concurrency of the `load` section `s`, and checks what
// load.mode users needs (a rate, no profile). Runs after the rest of `load` is read: load.warmup
// is exclusive with warmup_sessions / warmup_s, and sets the one of them that is its end.
void read_load_shapes(const yaml_util::Section& s, LoadConfig& l);

// load.prefill_concurrency is split across the workers: each needs a whole share.
void check_prefill_share(const yaml_util::Source& src, const Config& c);

// "  warmup: ..." and "  prefill_concurrency: ..." under `load:`, reading back the same.
void load_shapes_yaml(std::ostream& y, const LoadConfig& l);

}  // namespace convoy::config_detail
