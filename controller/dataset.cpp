#include "controller/dataset.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "controller/corpus.hpp"
#include "controller/jsonl_dataset.hpp"
#include "controller/mooncake.hpp"
#include "controller/synthetic.hpp"

namespace convoy::controller {

namespace {

// "FILE: " for messages about the config itself ("" when it came from no file).
std::string config_prefix(const Config& config) {
  return config.source_path.empty() ? "" : config.source_path + ": ";
}

}  // namespace

std::string resolve_dataset_path(const Config& config) {
  const auto& path = config.dataset.path;
  if (!path || path->empty()) {
    throw ConfigError(config_prefix(config) +
                      "dataset.path is required with dataset.type jsonl and mooncake");
  }
  namespace fs = std::filesystem;
  const fs::path given(*path);
  std::error_code ec;
  if (given.is_absolute() || fs::exists(given, ec) || config.source_path.empty()) return *path;
  const fs::path beside = fs::path(config.source_path).parent_path() / given;
  return fs::exists(beside, ec) ? beside.string() : *path;
}

std::vector<proto::Conversation> load_dataset(const Config& config) {
  if (config.load.mode == LoadMode::kTrace && config.dataset.type != DatasetType::kMooncake) {
    throw ConfigError(config_prefix(config) +
                      "load.mode trace needs the timestamps of dataset.type mooncake");
  }
  if (config.dataset.type == DatasetType::kSynthetic) return make_synthetic_dataset(config);

  const std::string path = resolve_dataset_path(config);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path: " + std::strerror(errno));
  if (config.dataset.type == DatasetType::kJsonl) return parse_jsonl_dataset(in, path, config);
  return parse_mooncake_trace(in, path, config);
}

}  // namespace convoy::controller
