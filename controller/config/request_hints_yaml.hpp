// dataset.tenants and dataset.agent_hints in convoy.yaml: what a conversation tells Dynamo about
// itself (nvext.cache_salt per tenant, nvext.agent_hints), read with file:line:key errors and
// written back so that they load again.
#pragma once

#include <string>

#include "controller/config/config.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy::config_detail {

// Dynamo's ranges for the hints (AgentHints: priority i32, strict_priority u32).
inline constexpr double kMinPriority = -2147483648.0;
inline constexpr double kMaxPriority = 2147483647.0;
inline constexpr double kMaxStrictPriority = 4294967295.0;

// Reads dataset.tenants and dataset.agent_hints of `s` into `d`. Throws ConfigError naming
// FILE:LINE: key.
void read_request_hints(const yaml_util::Section& s, DatasetConfig& d);

// "  tenants: ...\n  agent_hints: ...\n", as read_request_hints reads them.
std::string request_hints_yaml(const DatasetConfig& d);

}  // namespace convoy::config_detail
