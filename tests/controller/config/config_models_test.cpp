// target.models: several models or LoRA adapters in one run, and the draw that gives each
// conversation its model (by weight, from the seed and the conversation index alone).
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/config/target_models.hpp"

using convoy::Config;
using convoy::model_for;
using convoy::model_index_for;
using convoy::parse_config;

TEST_CASE("target.models lists weighted models and target.model becomes the first") {
  const Config c = parse_config(
      "target:\n  models:\n    - {name: base, weight: 3}\n    - {name: lora-a, weight: 1}\n",
      "c.yaml");
  REQUIRE(c.target.models.size() == 2);
  CHECK(c.target.models[0].name == "base");
  CHECK(c.target.models[0].weight == 3);
  CHECK(c.target.models[1].name == "lora-a");
  CHECK(c.target.model == "base");
  CHECK(Config{}.target.models.empty());
  CHECK(parse_config("target: {models: null}\n", "c.yaml").target.models.empty());
  // weight defaults to 1
  CHECK(parse_config("target: {models: [{name: x}]}\n", "c.yaml").target.models[0].weight == 1);
}

TEST_CASE("target.models bad input names the item and the key") {
  CHECK_ERROR("target:\n  model: m\n  models: [{name: a}]\n",
              "c.yaml:2: target.model: target.model and target.models are exclusive");
  CHECK_ERROR("target:\n  models: []\n", "c.yaml:2: target.models: the list is empty");
  CHECK_ERROR("target:\n  models: a\n", "target.models: expected a list of {name, weight}");
  CHECK_ERROR("target:\n  models:\n    - {name: a, weight: 0}\n",
              "c.yaml:3: target.models[0].weight: must be greater than 0, got 0");
  CHECK_ERROR("target:\n  models:\n    - {name: a}\n    - {name: b, weight: -2}\n",
              "c.yaml:4: target.models[1].weight: must be greater than 0, got -2");
  CHECK_ERROR("target:\n  models:\n    - {name: a}\n    - {name: a}\n",
              "c.yaml:4: target.models[1].name: duplicate model 'a'");
  CHECK_ERROR("target:\n  models:\n    - {weight: 2}\n",
              "target.models[0].name: every model needs a name");
  CHECK_ERROR("target:\n  models:\n    - {name: a, wieght: 2}\n", "target.models[0].wieght");
  CHECK_ERROR("target:\n  models:\n    - a\n", "target.models[0]: expected {name, weight}");
}

TEST_CASE("the resolved config writes target.models back so that it reads the same") {
  const Config c =
      parse_config("target:\n  models: [{name: a, weight: 2}, {name: b, weight: 0.5}]\n", "c.yaml");
  const Config again = parse_config(convoy::to_yaml(c), "again.yaml");
  REQUIRE(again.target.models.size() == 2);
  CHECK(again.target.models[1].name == "b");
  CHECK(again.target.models[1].weight == 0.5);
  CHECK(again.target.model == "a");
}

TEST_CASE("the model draw follows the weights and depends only on seed and conversation") {
  const std::vector<convoy::proto::ModelWeight> models = {{"a", 1}, {"b", 2}, {"c", 1}};
  constexpr uint64_t kDraws = 20'000;
  std::vector<int> counts(models.size(), 0);
  for (uint64_t i = 0; i < kDraws; ++i) ++counts[model_index_for(models, 7, i)];
  // Expected 5,000 / 10,000 / 5,000; binomial sd about 61 and 71: 5 sd is a flake-free bound.
  CHECK(std::abs(counts[0] - 5000) < 350);
  CHECK(std::abs(counts[1] - 10000) < 360);
  CHECK(std::abs(counts[2] - 5000) < 350);

  SUBCASE("the same seed and index give the same model, whatever else was drawn") {
    for (uint64_t i = 0; i < 200; ++i) {
      const size_t first = model_index_for(models, 7, i);
      CHECK(model_index_for(models, 7, 1000 + i) < models.size());
      CHECK(model_index_for(models, 7, i) == first);
    }
  }
  SUBCASE("another seed gives another assignment") {
    int differ = 0;
    for (uint64_t i = 0; i < 200; ++i) {
      differ += model_index_for(models, 7, i) != model_index_for(models, 8, i) ? 1 : 0;
    }
    CHECK(differ > 50);
  }
  SUBCASE("one model or none: always the first, and model_for falls back to target.model") {
    CHECK(model_index_for({{"only", 5}}, 7, 3) == 0);
    CHECK(model_index_for({}, 7, 3) == 0);
    convoy::proto::TargetSettings t;
    t.model = "m";
    CHECK(model_for(t, 7, 3) == "m");
    t.models = models;
    CHECK(model_for(t, 7, 3) == models[model_index_for(models, 7, 3)].name);
  }
}
