#include "controller/dataset/dataset.hpp"

#include <filesystem>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/log.hpp"
#include "controller/dataset/aiperf_jsonl.hpp"
#include "controller/dataset/dynamo_trace.hpp"
#include "controller/dataset/jsonl_dataset.hpp"
#include "controller/dataset/mooncake.hpp"
#include "controller/dataset/request_hints.hpp"
#include "controller/dataset/sharegpt.hpp"
#include "controller/dataset/synthetic.hpp"
#include "controller/dataset/token_plan.hpp"
#include "controller/dataset/weka_trace.hpp"

namespace convoy::controller {

namespace {

// "FILE: " for messages about the config itself ("" when it came from no file).
std::string config_prefix(const Config& config) {
  return config.source_path.empty() ? "" : config.source_path + ": ";
}

}  // namespace

namespace {

// The ShareGPT file, its replies counted by the local tokenizer when there is one, with what the
// validating pass mapped, dropped and skipped in the log (never silently).
std::unique_ptr<Dataset> open_sharegpt(const Config& config,
                                       const std::shared_ptr<const TokenPlan>& plan) {
  SharegptStats stats;
  FileDatasetOptions options;
  options.counter = plan ? plan->counter : nullptr;
  options.stats = &stats;
  const std::string path = resolve_dataset_path(config);
  auto dataset = open_sharegpt_dataset(path, config, options);
  for (const auto& line : describe_sharegpt_stats(stats, config)) {
    log_info("dataset ", path, ": ", line);
  }
  return dataset;
}

}  // namespace

std::string resolve_dataset_path(const Config& config) {
  const auto& path = config.dataset.path;
  if (!path || path->empty()) {
    throw ConfigError(config_prefix(config) +
                      "dataset.path is required with a file dataset (dataset.type " +
                      std::string(to_string(config.dataset.type)) + ")");
  }
  namespace fs = std::filesystem;
  const fs::path given(*path);
  std::error_code ec;
  if (given.is_absolute() || fs::exists(given, ec) || config.source_path.empty()) return *path;
  const fs::path beside = fs::path(config.source_path).parent_path() / given;
  return fs::exists(beside, ec) ? beside.string() : *path;
}

std::unique_ptr<Dataset> open_dataset(const Config& config, std::shared_ptr<const TokenPlan> plan) {
  if (config.load.mode == LoadMode::kTrace && config.dataset.type == DatasetType::kWekaTrace) {
    throw ConfigError(config_prefix(config) +
                      "load.mode trace needs start times across sessions, and a Weka trace's t "
                      "is each session's own clock: use load.mode concurrency, rate or users");
  }
  if (config.load.mode == LoadMode::kTrace && config.dataset.type != DatasetType::kMooncake &&
      config.dataset.type != DatasetType::kDynamoTrace) {
    throw ConfigError(config_prefix(config) +
                      "load.mode trace needs the timestamps of dataset.type mooncake or "
                      "dynamo_trace");
  }
  if (!plan) plan = local_token_plan(config);
  std::unique_ptr<Dataset> dataset;
  if (config.dataset.type == DatasetType::kSynthetic) {
    dataset = open_synthetic_dataset(config, Corpus::embedded(), plan);
  } else if (config.dataset.type == DatasetType::kJsonl) {
    dataset = open_jsonl_dataset(resolve_dataset_path(config), config);
  } else if (config.dataset.type == DatasetType::kSharegpt) {
    dataset = open_sharegpt(config, plan);
  } else if (config.dataset.type == DatasetType::kAiperfSingleTurn ||
             config.dataset.type == DatasetType::kAiperfMultiTurn) {
    dataset = open_aiperf_dataset(resolve_dataset_path(config),
                                  config.dataset.type == DatasetType::kAiperfMultiTurn, config);
  } else if (config.dataset.type == DatasetType::kDynamoTrace) {
    dataset = open_dynamo_trace(resolve_dataset_path(config), config);
  } else if (config.dataset.type == DatasetType::kWekaTrace) {
    dataset = open_weka_trace(resolve_dataset_path(config), config);  // a file or a folder
  } else {
    dataset = open_mooncake_trace(resolve_dataset_path(config), config);
  }
  if (plan && plan->counter && config.dataset.type != DatasetType::kSynthetic) {
    dataset = count_with_tokenizer(std::move(dataset), plan->counter);
  }
#if defined(__GLIBC__)
  // Validating a file held one row and a hash per id at a time: hand what it freed back to the
  // system, so the controller's RSS is what the index holds.
  if (config.dataset.type != DatasetType::kSynthetic) malloc_trim(0);
#endif
  if (dataset->size() == 0) throw ConfigError(config_prefix(config) + "dataset: no conversations");
  return with_request_hints(std::move(dataset), config);
}

std::vector<proto::Conversation> materialize(const Dataset& dataset) {
  std::vector<proto::Conversation> conversations;
  conversations.reserve(dataset.size());
  for (uint64_t i = 0; i < dataset.size(); ++i) conversations.push_back(dataset.conversation(i));
  return conversations;
}

std::vector<proto::Conversation> load_dataset(const Config& config) {
  return materialize(*open_dataset(config));
}

}  // namespace convoy::controller
