// libFuzzer target for the YAML configuration loader: arbitrary bytes as a config
// file. Beyond "does not crash or hang": the only exception is ConfigError (a clear message for
// exit 2), and a config that loads writes itself back as YAML (what summary.json's `run` holds).
// yaml_guard bounds any document (aliases, nodes, bytes, depth) before the loader walks it, so
// each input is fast; -timeout in .ci/run turns a slow one into a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/log.hpp"
#include "controller/config/config.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  convoy::set_log_level(convoy::LogLevel::kError);  // no warning lines for every input
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const convoy::Config c = convoy::parse_config(text, "fuzz.yaml");
    const std::string yaml = convoy::to_yaml(c);
    if (yaml.empty()) __builtin_trap();
  } catch (const convoy::ConfigError&) {
    // A bad input, refused with a message: what convoy validate answers with exit 2.
  }
  return 0;
}
