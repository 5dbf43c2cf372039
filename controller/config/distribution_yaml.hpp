// Distributions in convoy.yaml: the plain form {mean, stddev, min, max} (or a bare number) and
// the mixture {mix: [{weight, mean, stddev, min, max}, ...]}, read with file:line:key errors and
// written back in the form they were given.
#pragma once

#include <string>
#include <string_view>

#include "controller/config/config.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

// Reads `key` of `s` into `d` when present (absent leaves `d` as it is). `floor` is the least
// value the key allows; min: null means the floor. Throws ConfigError naming FILE:LINE: key.
void read_distribution(const yaml_util::Section& s, std::string_view key, Distribution& d,
                       double floor);

// `d` as a YAML flow mapping that read_distribution reads back to the same value.
std::string distribution_yaml(const Distribution& d);

}  // namespace convoy::config_detail
