#include "controller/config/config_keys.hpp"

#include "controller/config/config.hpp"
#include "controller/config/load_profile_yaml.hpp"

namespace convoy {

namespace config_keys {

std::vector<std::string> known_paths() {
  std::vector<std::string> paths;
  auto add = [&](std::string_view section, const Keys& keys) {
    for (auto k : keys) paths.push_back(std::string(section) + "." + std::string(k));
  };
  for (auto k : kTopKeys) paths.emplace_back(k);
  add("target", kTargetKeys);
  add("mock", kMockKeys);
  add("dataset", kDatasetKeys);
  add("load", kLoadKeys);
  add("load.cancel", kCancelKeys);
  add("load.trace", kTraceKeys);
  add("load.warmup", kWarmupKeys);
  add("session_routing", kRoutingKeys);
  add("workers", kWorkersKeys);
  add("output", kOutputKeys);
  add("fail_on", kFailOnKeys);
  add("dataset.subagents", kSubagentKeys);
  add("dataset.prefixes", kPrefixesKeys);
  add("dataset.agent_hints", kAgentHintsKeys);
  add("telemetry", kTelemetryKeys);
  config_detail::add_load_profile_paths(paths);
  return paths;
}

}  // namespace config_keys

const char* to_string(DatasetType v) {
  return config_keys::kDatasetTypeNames[static_cast<std::size_t>(v)].data();
}
const char* to_string(DatasetText v) {
  return config_keys::kDatasetTextNames[static_cast<std::size_t>(v)].data();
}
const char* to_string(LoadMode v) {
  return config_keys::kLoadModeNames[static_cast<std::size_t>(v)].data();
}
const char* to_string(Arrival v) {
  return config_keys::kArrivalNames[static_cast<std::size_t>(v)].data();
}
const char* to_string(RampShape v) {
  return config_keys::kRampShapeNames[static_cast<std::size_t>(v)].data();
}
const char* to_string(ProfileKind v) {
  return config_keys::kProfileKindNames[static_cast<std::size_t>(v)].data();
}

std::vector<std::string> known_slo_metrics() {
  return std::vector<std::string>(config_keys::kSloMetrics.begin(), config_keys::kSloMetrics.end());
}

}  // namespace convoy
