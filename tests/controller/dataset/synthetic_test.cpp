#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "controller/dataset/corpus.hpp"
#include "controller/dataset/ids.hpp"
#include "controller/dataset/rng.hpp"
#include "controller/dataset/synthetic.hpp"
#include "dataset_test_util.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

using testing::packed;

struct Moments {
  double mean = 0;
  double stddev = 0;
};

Moments moments(const std::vector<double>& values) {
  Moments m;
  for (const double v : values) m.mean += v;
  m.mean /= static_cast<double>(values.size());
  for (const double v : values) m.stddev += (v - m.mean) * (v - m.mean);
  m.stddev = std::sqrt(m.stddev / static_cast<double>(values.size() - 1));
  return m;
}

}  // namespace

TEST_CASE("draws follow the configured normal distribution, clamped") {
  SUBCASE("real draws: mean and stddev within tolerance over many draws") {
    Rng rng(7);
    const Distribution d{100, 15, std::nullopt, std::nullopt};
    std::vector<double> values;
    for (int i = 0; i < 20000; ++i) values.push_back(draw_real(d, rng, -1e9));
    const auto m = moments(values);
    CHECK(m.mean == doctest::Approx(100).epsilon(0.01));
    CHECK(m.stddev == doctest::Approx(15).epsilon(0.03));
  }
  SUBCASE("integer draws are rounded and clamped to [min, max]") {
    Rng rng(8);
    const Distribution d{4, 3, 2, 6};
    std::set<int64_t> seen;
    for (int i = 0; i < 5000; ++i) {
      const int64_t v = draw_integer(d, rng, 1);
      CHECK(v >= 2);
      CHECK(v <= 6);
      seen.insert(v);
    }
    CHECK(seen == std::set<int64_t>{2, 3, 4, 5, 6});
  }
  SUBCASE("the floor applies when min is unset or lower") {
    Rng rng(9);
    const Distribution d{0, 10, std::nullopt, std::nullopt};
    for (int i = 0; i < 1000; ++i) CHECK(draw_integer(d, rng, 1) >= 1);
    const Distribution negative_min{-5, 0, -10, std::nullopt};
    CHECK(draw_real(negative_min, rng, 0) == 0);
  }
  SUBCASE("stddev 0 gives the mean exactly") {
    Rng rng(10);
    CHECK(draw_integer(Distribution{12.4, 0, 1, 32}, rng, 1) == 12);
    CHECK(draw_real(Distribution{250, 0, 0, std::nullopt}, rng, 0) == 250);
  }
  SUBCASE("a generator depends only on (seed, index, stream)") {
    Rng a(42, 3, Stream::kShape);
    Rng b(42, 3, Stream::kShape);
    Rng c(42, 4, Stream::kShape);
    Rng d(42, 3, Stream::kText);
    const uint64_t first = a.next_u64();
    CHECK(first == b.next_u64());
    CHECK(first != c.next_u64());
    CHECK(first != d.next_u64());
  }
}

TEST_CASE("correlation ids are uuid4-shaped and derive from seed + index") {
  const std::string id = correlation_id(42, 0);
  CHECK(is_uuid4(id));
  CHECK(id == correlation_id(42, 0));
  CHECK(id != correlation_id(42, 1));
  CHECK(id != correlation_id(43, 0));
  std::set<std::string> ids;
  for (uint64_t i = 0; i < 2000; ++i) {
    const auto each = correlation_id(1, i);
    CHECK(is_uuid4(each));
    ids.insert(each);
  }
  CHECK(ids.size() == 2000);
  CHECK_FALSE(is_uuid4("not-a-uuid"));
  CHECK_FALSE(is_uuid4("123e4567-e89b-12d3-a456-426614174000"));  // version 1
  CHECK(default_conversation_id(17) == "conv-17");
}

TEST_CASE("synthetic datasets are deterministic and generable one conversation at a time") {
  Config config;
  config.seed = 1234;
  config.dataset.conversations = 40;
  config.dataset.shared_prefix_tokens = 64;
  config.dataset.think_time_ms = Distribution{500, 100, 0, std::nullopt};

  const auto all = make_synthetic_dataset(config);
  REQUIRE(all.size() == 40);

  SUBCASE("the same config gives byte-identical conversations") {
    const auto again = make_synthetic_dataset(config);
    for (size_t i = 0; i < all.size(); ++i) CHECK(packed(all[i]) == packed(again[i]));
  }
  SUBCASE("conversation i alone equals element i, in any order") {
    for (uint64_t i : {39u, 0u, 17u, 5u}) {
      CHECK(packed(make_synthetic_conversation(config, i)) == packed(all[i]));
    }
  }
  SUBCASE("a larger dataset has the smaller one as its prefix") {
    Config bigger = config;
    bigger.dataset.conversations = 60;
    const auto more = make_synthetic_dataset(bigger);
    for (size_t i = 0; i < all.size(); ++i) CHECK(packed(more[i]) == packed(all[i]));
  }
  SUBCASE("another seed gives other conversations") {
    Config other = config;
    other.seed = 1235;
    CHECK(packed(make_synthetic_conversation(other, 3)) != packed(all[3]));
  }
  SUBCASE("ids, indexes and timing fields") {
    for (size_t i = 0; i < all.size(); ++i) {
      CHECK(all[i].index == i);
      CHECK(all[i].conversation_id == "conv-" + std::to_string(i));
      CHECK(all[i].correlation_id == correlation_id(config.seed, i));
      CHECK(all[i].start_ns == 0);
      REQUIRE_FALSE(all[i].turns.empty());
      CHECK(all[i].turns[0].delay_ms == 0);
    }
  }
}

TEST_CASE("synthetic text: shared prefix, distinct conversations, requested lengths") {
  Config config;
  config.dataset.conversations = 200;
  config.dataset.shared_prefix_tokens = 300;
  const auto all = make_synthetic_dataset(config);

  SUBCASE("the system prompt is identical everywhere and has the requested tokens") {
    CHECK(all[0].system_prompt.size() == 300 * kBytesPerToken);
    for (const auto& c : all) CHECK(c.system_prompt == all[0].system_prompt);
    CHECK(synthetic_system_prompt(config) == all[0].system_prompt);
  }
  SUBCASE("no system prompt without shared_prefix_tokens") {
    config.dataset.shared_prefix_tokens = 0;
    CHECK(make_synthetic_conversation(config, 0).system_prompt.empty());
  }
  SUBCASE("every conversation's first message is distinct and starts with its tag") {
    std::set<std::string> firsts;
    for (const auto& c : all) {
      const std::string tag = "[c" + std::to_string(c.index) + "] ";
      CHECK(c.turns[0].user_text.rfind(tag, 0) == 0);
      firsts.insert(c.turns[0].user_text);
    }
    CHECK(firsts.size() == all.size());
  }
  SUBCASE("user text length matches the estimate and is printable ASCII") {
    for (const auto& c : all) {
      for (const auto& t : c.turns) {
        CHECK(t.input_tokens_est == estimate_tokens(t.user_text));
        CHECK(t.user_text.size() % kBytesPerToken == 0);
        CHECK(std::all_of(t.user_text.begin(), t.user_text.end(),
                          [](char ch) { return ch >= ' ' && ch < 0x7F; }));
        CHECK(t.recorded_reply.empty());  // history: live
      }
    }
  }
}

TEST_CASE("synthetic shapes follow the configured distributions") {
  Config config;
  config.seed = 99;
  config.dataset.conversations = 3000;
  config.dataset.turns = Distribution{6, 2, 1, 40};
  config.dataset.input_tokens = Distribution{200, 30, 1, std::nullopt};
  config.dataset.output_tokens = Distribution{80, 10, 1, std::nullopt};
  config.dataset.think_time_ms = Distribution{1000, 200, 0, std::nullopt};
  std::vector<double> turns, inputs, outputs, thinks;
  for (uint64_t i = 0; i < 3000; ++i) {
    const auto c = make_synthetic_conversation(config, i);
    turns.push_back(static_cast<double>(c.turns.size()));
    for (size_t k = 0; k < c.turns.size(); ++k) {
      inputs.push_back(static_cast<double>(c.turns[k].input_tokens_est));
      outputs.push_back(static_cast<double>(c.turns[k].max_tokens));
      if (k > 0) thinks.push_back(c.turns[k].delay_ms);
    }
  }
  const auto t = moments(turns);
  CHECK(t.mean == doctest::Approx(6).epsilon(0.03));
  CHECK(t.stddev == doctest::Approx(2).epsilon(0.08));
  // Turn 0 carries a tag of a few bytes inside its budget; the estimate is still the draw.
  const auto in = moments(inputs);
  CHECK(in.mean == doctest::Approx(200).epsilon(0.01));
  CHECK(in.stddev == doctest::Approx(30).epsilon(0.05));
  const auto out = moments(outputs);
  CHECK(out.mean == doctest::Approx(80).epsilon(0.01));
  CHECK(out.stddev == doctest::Approx(10).epsilon(0.05));
  const auto think = moments(thinks);
  CHECK(think.mean == doctest::Approx(1000).epsilon(0.01));
  CHECK(think.stddev == doctest::Approx(200).epsilon(0.05));
}

TEST_CASE("synthetic history: recorded gives every non-final turn a reply") {
  Config config;
  config.dataset.conversations = 20;
  config.dataset.turns = Distribution{3, 0, 3, 3};
  config.dataset.history = HistoryMode::kRecorded;
  for (const auto& c : make_synthetic_dataset(config)) {
    REQUIRE(c.turns.size() == 3);
    CHECK(c.turns[0].recorded_reply.size() == bytes_for_tokens(c.turns[0].max_tokens));
    CHECK(c.turns[1].recorded_reply.size() == bytes_for_tokens(c.turns[1].max_tokens));
    CHECK(c.turns[2].recorded_reply.empty());
  }
}

}  // namespace convoy::controller

namespace convoy::controller {

TEST_CASE("synthetic conversations are generated when asked for, not up front") {
  Config config;
  config.seed = 7;
  config.dataset.conversations = 10'000'000;
  config.dataset.shared_prefix_tokens = 32;
  // Building ten million conversations up front took seconds and gigabytes: opening is O(1).
  const auto dataset = open_synthetic_dataset(config);
  REQUIRE(dataset->size() == 10'000'000);
  for (uint64_t i : {9'999'999u, 0u, 4'242'424u}) {
    CHECK(testing::packed(dataset->conversation(i)) ==
          testing::packed(make_synthetic_conversation(config, i)));
    CHECK(dataset->start_ns(i) == 0);
  }
}

TEST_CASE("synthetic draws that could not cross the wire are rejected at load") {
  Config config;
  config.source_path = "run.yaml";
  auto error_of = [&] {
    return test::error_message<ConfigError>([&] { open_synthetic_dataset(config); });
  };
  SUBCASE("a turn's text") {
    config.dataset.input_tokens = Distribution{5e6, 0, 1, std::nullopt};
    CHECK(error_of() ==
          "run.yaml: dataset.input_tokens: a turn's text of up to 5e+06 tokens (2e+07 bytes) is "
          "longer than one string may be on the wire (16777216 bytes (16 MiB))");
  }
  SUBCASE("the tail of the draw counts, unless max bounds it") {
    config.dataset.input_tokens = Distribution{1e6, 1e6, 1, std::nullopt};
    CHECK(error_of().starts_with("run.yaml: dataset.input_tokens: a turn's text of up to 7e+06"));
    config.dataset.input_tokens.max = 4e6;
    config.dataset.turns = Distribution{1, 0, 1, 1};
    CHECK(error_of() == "");
  }
  SUBCASE("a recorded reply and the system prompt") {
    config.dataset.history = HistoryMode::kRecorded;
    config.dataset.output_tokens = Distribution{5e6, 0, 1, std::nullopt};
    CHECK(error_of().starts_with("run.yaml: dataset.output_tokens: with history: recorded"));
    config.dataset.output_tokens = Distribution{64, 0, 1, std::nullopt};
    config.dataset.shared_prefix_tokens = 5'000'000;
    CHECK(error_of().starts_with("run.yaml: dataset.shared_prefix_tokens: the system prompt"));
  }
  SUBCASE("a whole conversation") {
    config.dataset.turns = Distribution{20, 0, 1, 32};
    config.dataset.input_tokens = Distribution{1e6, 0, 1, std::nullopt};
    CHECK(error_of().starts_with("run.yaml: dataset.turns: up to 20 turns of up to"));
  }
}

// --- dataset.subagents ---------------------------------------------------------------------------

namespace {

Config with_subagents(double probability) {
  Config config;
  config.seed = 99;
  config.dataset.conversations = 200;
  config.dataset.turns = Distribution{3, 0, 1, 8};
  config.dataset.shared_prefix_tokens = 16;
  SubagentsConfig spec;
  spec.probability = probability;
  spec.count = Distribution{2, 0, 1, 16};
  spec.turns = Distribution{2, 0, 1, 32};
  spec.spawn_after_turn = Distribution{2, 0, 1, std::nullopt};
  config.dataset.subagents = spec;
  return config;
}

}  // namespace

TEST_CASE("synthetic sub-agents follow dataset.subagents, one generation under the lead") {
  const Config config = with_subagents(1.0);
  const auto all = make_synthetic_dataset(config);
  REQUIRE(all.size() == 200);  // size() counts families
  std::set<std::string> ids;
  for (const auto& lead : all) {
    ids.insert(lead.correlation_id);
    REQUIRE(lead.subagents.size() == 2);
    for (size_t p = 0; p < lead.subagents.size(); ++p) {
      const auto& child = lead.subagents[p];
      CHECK(child.parent == -1);
      CHECK(child.spawn_after_turn == 2);
      CHECK(child.turns.size() == 2);
      CHECK(child.turns[0].delay_ms == 0);
      CHECK(child.system_prompt == lead.system_prompt);  // the shared prefix
      CHECK(child.conversation_id == lead.conversation_id + "/sub" + std::to_string(p));
      CHECK(child.correlation_id == subagent_correlation_id(config.seed, lead.index, p));
      CHECK(child.turns[0].user_text.starts_with("[c" + std::to_string(lead.index) + "s" +
                                                 std::to_string(p) + "] "));
      ids.insert(child.correlation_id);
    }
  }
  CHECK(ids.size() == 600);  // no two members of any family share an id
}

TEST_CASE("synthetic sub-agents are seeded per lead and leave the lead's draws alone") {
  const Config config = with_subagents(0.5);
  const auto all = make_synthetic_dataset(config);
  size_t with = 0;
  for (const auto& lead : all) with += lead.subagents.empty() ? 0 : 1;
  CHECK(with > 70);  // about half of 200
  CHECK(with < 130);
  SUBCASE("a family alone equals the same family in the list") {
    for (uint64_t i : {199u, 0u, 42u}) {
      CHECK(packed(make_synthetic_conversation(config, i)) == packed(all[i]));
    }
  }
  SUBCASE("turning sub-agents off changes no lead") {
    Config off = config;
    off.dataset.subagents.reset();
    const auto plain = make_synthetic_dataset(off);
    for (size_t i = 0; i < all.size(); ++i) {
      proto::Conversation lead = all[i];
      lead.subagents.clear();
      CHECK(packed(lead) == packed(plain[i]));
    }
  }
}

TEST_CASE("synthetic spawn_after_turn is clamped to the lead's turns") {
  Config config = with_subagents(1.0);
  config.dataset.turns = Distribution{2, 0, 1, 2};
  config.dataset.subagents->spawn_after_turn = Distribution{9, 0, 1, std::nullopt};
  for (const auto& lead : make_synthetic_dataset(config)) {
    for (const auto& child : lead.subagents) CHECK(child.spawn_after_turn == 2);
  }
}

TEST_CASE("synthetic: the wire limit counts the lead and its sub-agents") {
  Config config = with_subagents(0.1);
  config.source_path = "run.yaml";
  config.dataset.turns = Distribution{4, 0, 1, 4};
  config.dataset.input_tokens = Distribution{1e6, 0, 1, std::nullopt};  // 4 MB a turn
  auto error_of = [&] {
    return test::error_message<ConfigError>([&] { open_synthetic_dataset(config); });
  };
  CHECK(error_of() == "");
  config.dataset.subagents->count = Distribution{8, 0, 1, 8};  // 16 + 8 * 8 MB
  config.dataset.subagents->turns = Distribution{2, 0, 1, 2};
  CHECK(error_of().starts_with("run.yaml: dataset.subagents: a lead of up to "));
  config.dataset.subagents->probability = 0;  // never spawns: no family to weigh
  CHECK(error_of() == "");
}

}  // namespace convoy::controller
