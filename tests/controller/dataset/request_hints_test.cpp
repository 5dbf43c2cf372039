// dataset.tenants and dataset.agent_hints on the conversations: one draw per conversation from
// (seed, index) only, tenants in proportion to their weights, every turn of the family carrying
// nvext.cache_salt and nvext.agent_hints (osl = the turn's max_tokens), a row's own values kept.
#include "controller/dataset/request_hints.hpp"

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <map>
#include <string>

#include "controller/config/config.hpp"

using namespace convoy;
using namespace convoy::controller;

namespace {

Config hinted_config() {
  return parse_config(
      "seed: 11\n"
      "dataset:\n"
      "  conversations: 40\n"
      "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
      "  subagents: {probability: 1, count: 1, turns: 1}\n"
      "  tenants: [{name: a, weight: 3}, {name: b, weight: 1}]\n"
      "  agent_hints:\n"
      "    priority: {mix: [{weight: 1, mean: 9, stddev: 0}, {weight: 1, mean: 1, stddev: 0}]}\n"
      "    osl: true\n"
      "    speculative_prefill: true\n",
      "hints.yaml");
}

rapidjson::Document nvext_of(const proto::Turn& t) {
  rapidjson::Document d;
  d.Parse(t.extra_json.c_str());
  REQUIRE(d.IsObject());
  REQUIRE(d.HasMember("nvext"));
  rapidjson::Document out;
  out.CopyFrom(d["nvext"], out.GetAllocator());
  return out;
}

}  // namespace

TEST_CASE("request hints: a tenant by weight, drawn from (seed, index) only") {
  DatasetConfig d = hinted_config().dataset;
  std::map<std::string, int> tenants;
  std::map<int64_t, int> priorities;
  constexpr int kDraws = 8000;
  for (int i = 0; i < kDraws; ++i) {
    const ConversationHints h = draw_hints(d, 11, static_cast<uint64_t>(i));
    ++tenants[h.tenant];
    REQUIRE(h.priority.has_value());
    ++priorities[*h.priority];
    CHECK_FALSE(h.strict_priority.has_value());
  }
  CHECK(tenants.size() == 2);
  CHECK(tenants["a"] > kDraws * 0.72);  // 3:1 -> 75%
  CHECK(tenants["a"] < kDraws * 0.78);
  CHECK(priorities.size() == 2);
  CHECK(priorities[9] > kDraws * 0.46);
  CHECK(priorities[1] > kDraws * 0.46);
  const ConversationHints a = draw_hints(d, 11, 5);
  const ConversationHints b = draw_hints(d, 11, 5);
  CHECK(a.tenant == b.tenant);
  CHECK(a.priority == b.priority);
}

TEST_CASE("request hints: every turn of a family carries cache_salt and agent_hints") {
  const Config config = hinted_config();
  const auto conversations = load_dataset(config);
  REQUIRE(conversations.size() == 40);
  for (const proto::Conversation& c : conversations) {
    const ConversationHints h = draw_hints(config.dataset, config.seed, c.index);
    CHECK(c.tenant == h.tenant);
    CHECK(c.priority == *h.priority);
    REQUIRE_FALSE(c.subagents.empty());
    auto check_turn = [&](const proto::Turn& t) {
      const rapidjson::Document nvext = nvext_of(t);
      CHECK(std::string(nvext["cache_salt"].GetString()) == h.tenant);
      CHECK(nvext["agent_hints"]["priority"].GetInt64() == *h.priority);
      CHECK(nvext["agent_hints"]["osl"].GetInt64() == t.max_tokens);
      CHECK(nvext["agent_hints"]["speculative_prefill"].GetBool());
      CHECK_FALSE(nvext["agent_hints"].HasMember("strict_priority"));
    };
    for (const proto::Turn& t : c.turns) check_turn(t);
    for (const proto::SubAgent& s : c.subagents) {
      for (const proto::Turn& t : s.turns) check_turn(t);
    }
  }
}

TEST_CASE("request hints: a turn's own nvext values win, the rest of its extra stays") {
  const DatasetConfig d = hinted_config().dataset;
  proto::Conversation c;
  c.index = 3;
  proto::Turn t;
  t.max_tokens = 7;
  t.extra_json = R"({"temperature":0.5,"nvext":{"cache_salt":"mine","agent_hints":{"osl":99}}})";
  c.turns.push_back(t);
  apply_hints(d, 11, c);
  const rapidjson::Document nvext = nvext_of(c.turns[0]);
  CHECK(std::string(nvext["cache_salt"].GetString()) == "mine");
  CHECK(nvext["agent_hints"]["osl"].GetInt64() == 99);
  CHECK(nvext["agent_hints"].HasMember("priority"));
  rapidjson::Document whole;
  whole.Parse(c.turns[0].extra_json.c_str());
  CHECK(whole["temperature"].GetDouble() == 0.5);
}

TEST_CASE("request hints: without the keys the dataset is untouched") {
  const Config plain = parse_config("seed: 11\ndataset:\n  conversations: 3\n", "plain.yaml");
  for (const proto::Conversation& c : load_dataset(plain)) {
    CHECK(c.tenant.empty());
    CHECK(c.priority == proto::kNoPriority);
    for (const proto::Turn& t : c.turns) CHECK(t.extra_json.empty());
  }
}
