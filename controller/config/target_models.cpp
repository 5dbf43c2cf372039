#include "controller/config/target_models.hpp"

#include <yaml-cpp/yaml.h>

#include "common/hash.hpp"

namespace convoy {

namespace {

const std::vector<std::string_view> kModelEntryKeys = {"name", "weight"};

// Apart from every dataset stream (controller/dataset/rng.hpp), so adding models never moves
// a conversation's text or shape.
constexpr uint64_t kModelStream = 0x6d6f64656c730001ull;

}  // namespace

void read_target_models(const yaml_util::Section& s, proto::TargetSettings& t) {
  const YAML::Node n = s.node("models");
  if (!n.IsDefined()) return;
  if (n.IsNull()) {
    t.models.clear();
    return;
  }
  const std::string path = s.path("models");
  const yaml_util::Source& src = s.source();
  if (!n.IsSequence()) {
    src.fail(path, "expected a list of {name, weight}, got " + yaml_util::describe(n));
  }
  if (n.size() == 0) src.fail(path, "the list is empty (use null, or target.model for one model)");
  if (s.present("model")) {
    src.fail_at(s.path("model"), s.path("model"),
                "target.model and target.models are exclusive: list every model in models");
  }
  std::vector<proto::ModelWeight> models;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (!n[i].IsMap()) {
      src.fail(item_path, "expected {name, weight}, got " + yaml_util::describe(n[i]));
    }
    const yaml_util::Section item(src, n[i], item_path, kModelEntryKeys);
    proto::ModelWeight m;
    item.check(item.present("name"), "name", "every model needs a name");
    item.read("name", m.name);
    item.check(!m.name.empty(), "name", "must not be empty");
    item.read("weight", m.weight);
    item.check(m.weight > 0, "weight",
               "must be greater than 0, got " + yaml_util::format_number(m.weight));
    for (const auto& earlier : models) {
      item.check(earlier.name != m.name, "name", "duplicate model '" + m.name + "'");
    }
    models.push_back(std::move(m));
  }
  t.models = std::move(models);
  t.model = t.models.front().name;
}

std::size_t model_index_for(const std::vector<proto::ModelWeight>& models, uint64_t seed,
                            uint64_t conversation_index) {
  if (models.size() <= 1) return 0;
  uint64_t state = seed ^ kModelStream;
  state = splitmix64_next(state) ^ conversation_index;
  const uint64_t bits = splitmix64_next(state);
  double total = 0;
  for (const auto& m : models) total += m.weight;
  // Uniform in [0, total) with 53 random bits; the last model takes any rounding remainder.
  double u = static_cast<double>(bits >> 11) * 0x1.0p-53 * total;
  for (std::size_t i = 0; i + 1 < models.size(); ++i) {
    if (u < models[i].weight) return i;
    u -= models[i].weight;
  }
  return models.size() - 1;
}

const std::string& model_for(const proto::TargetSettings& t, uint64_t seed,
                             uint64_t conversation_index) {
  if (t.models.empty()) return t.model;
  return t.models[model_index_for(t.models, seed, conversation_index)].name;
}

}  // namespace convoy
