// Mixture distributions drawn: each draw picks a component by weight, then draws from it, seeded
// by (seed, conversation, turn) like the plain form, and bounded for the wire by the highest
// component.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/dataset/rng.hpp"
#include "controller/dataset/synthetic.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

// 0.5 of 100 and 0.5 of 1000 tokens, no spread: only those two values can come out.
Distribution half_and_half_mix() {
  Distribution d{550, 450, 1, std::nullopt};
  d.mix = {MixComponent{0.5, 100, 0, 1, std::nullopt}, MixComponent{0.5, 1000, 0, 1, std::nullopt}};
  return d;
}

}  // namespace

TEST_CASE("a mix draw picks a component by weight, then draws from it") {
  SUBCASE("0.5/0.5 of 100 and 1000 with stddev 0 gives only those, about half each") {
    Rng rng(11);
    const Distribution d = half_and_half_mix();
    std::map<int64_t, int> counts;
    for (int i = 0; i < 10000; ++i) ++counts[draw_integer(d, rng, 1)];
    REQUIRE(counts.size() == 2);
    // Binomial(10000, 0.5): stddev 50, so 4800..5200 is four standard deviations.
    CHECK(counts[100] > 4800);
    CHECK(counts[100] < 5200);
    CHECK(counts[100] + counts[1000] == 10000);
  }
  SUBCASE("weights are relative: 3 to 1 is 75 percent, a zero weight is never picked") {
    Rng rng(12);
    Distribution d{0, 0, 1, std::nullopt};
    d.mix = {MixComponent{3, 10, 0, 1, std::nullopt}, MixComponent{0, 50, 0, 1, std::nullopt},
             MixComponent{1, 20, 0, 1, std::nullopt}};
    std::map<int64_t, int> counts;
    for (int i = 0; i < 8000; ++i) ++counts[draw_integer(d, rng, 1)];
    CHECK(counts.count(50) == 0);
    CHECK(counts[10] > 5800);  // 6000 expected, stddev about 39
    CHECK(counts[10] < 6200);
  }
  SUBCASE("each component keeps its own spread and clamp, and the mixture's min raises all") {
    Rng rng(13);
    Distribution d{0, 0, 1, std::nullopt};
    d.mix = {MixComponent{1, 100, 30, 90, 110}, MixComponent{1, 1000, 100, 1, std::nullopt}};
    std::set<bool> low_side;
    for (int i = 0; i < 2000; ++i) {
      const int64_t v = draw_integer(d, rng, 1);
      const bool low = v <= 110;
      low_side.insert(low);
      if (low) CHECK(v >= 90);
    }
    CHECK(low_side.size() == 2);
    d.min = 500;  // as exact tokens raise it
    for (int i = 0; i < 200; ++i) CHECK(draw_integer(d, rng, 1) >= 500);
    CHECK(draw_real(d, rng, 0) >= 500);
  }
  SUBCASE("the same seed gives the same sequence, another seed another") {
    const Distribution d = half_and_half_mix();
    auto sequence = [&](uint64_t seed) {
      Rng rng(seed, 5, 2, Stream::kShape);
      std::vector<int64_t> out;
      for (int i = 0; i < 64; ++i) out.push_back(draw_integer(d, rng, 1));
      return out;
    };
    CHECK(sequence(1) == sequence(1));
    CHECK(sequence(1) != sequence(2));
  }
}

TEST_CASE("synthetic conversations with a mix: per turn lengths from the mix, deterministic") {
  Config config;
  config.seed = 5;
  config.dataset.conversations = 400;
  config.dataset.turns = Distribution{3, 0, 3, 3};
  config.dataset.input_tokens = half_and_half_mix();
  config.dataset.output_tokens = Distribution{0, 0, 1, std::nullopt};
  config.dataset.output_tokens.mix = {MixComponent{1, 16, 0, 1, std::nullopt},
                                      MixComponent{1, 64, 0, 1, std::nullopt}};
  std::map<int64_t, int> inputs;
  std::set<int64_t> outputs;
  for (uint64_t i = 0; i < 400; ++i) {
    const auto c = make_synthetic_conversation(config, i);
    // Conversation i alone is the same conversation as in any other order or worker split.
    CHECK(testing::packed(c) == testing::packed(make_synthetic_conversation(config, i)));
    for (const auto& turn : c.turns) {
      ++inputs[turn.input_tokens_est];
      outputs.insert(turn.max_tokens);
    }
  }
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[100] > 500);  // 1200 turns, 600 expected each, stddev about 17
  CHECK(inputs[1000] > 500);
  CHECK(outputs == std::set<int64_t>{16, 64});
}

TEST_CASE("a mix is bounded for the wire by its highest component") {
  Config config;
  config.source_path = "run.yaml";
  config.dataset.input_tokens = Distribution{0, 0, 1, std::nullopt};
  config.dataset.input_tokens.mix = {MixComponent{99, 100, 0, 1, std::nullopt},
                                     MixComponent{1, 5e6, 0, 1, std::nullopt}};
  const std::string error =
      test::error_message<ConfigError>([&] { open_synthetic_dataset(config); });
  CHECK(error.starts_with("run.yaml: dataset.input_tokens: a turn's text of up to 5e+06 tokens"));
  config.dataset.input_tokens.mix[1].weight = 0;  // never drawn: no longer a bound
  CHECK(test::error_message<ConfigError>([&] { open_synthetic_dataset(config); }) == "");
}

}  // namespace convoy::controller
