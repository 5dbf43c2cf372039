// /mock/stats' per-session statistics stay bounded: an LRU of --stats-sessions sessions, with
// totals that keep counting every session.
#include <rapidjson/document.h>

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "mock/options.hpp"
#include "mock/stats.hpp"

namespace convoy::mock {
namespace {

rapidjson::Document sessions_of(const Stats& stats) {
  rapidjson::Document doc;
  doc.Parse(stats.json({}, 0).c_str());
  REQUIRE_FALSE(doc.HasParseError());
  rapidjson::Document out;
  out.CopyFrom(doc["sessions"], out.GetAllocator());
  return out;
}

std::set<std::string> ids_of(const rapidjson::Value& sessions) {
  std::set<std::string> ids;
  for (const auto& m : sessions["by_id"].GetObject()) ids.insert(m.name.GetString());
  return ids;
}

TEST_CASE("session statistics keep the most recently seen sessions up to the limit") {
  Stats stats(3);
  CHECK(stats.observe_session("a", 0) == 0);
  CHECK(stats.observe_session("b", 0) == 0);
  CHECK(stats.observe_session("c", 0) == 0);
  CHECK(stats.observe_session("a", 0) == 1);  // a is now the most recent; b the least
  CHECK(stats.observe_session("d", 0) == 0);  // evicts b

  const auto s = sessions_of(stats);
  CHECK(ids_of(s) == std::set<std::string>{"a", "c", "d"});
  CHECK(s["by_id"]["a"]["requests"].GetInt64() == 2);
  CHECK(s["count"].GetInt64() == 4);
  CHECK(s["tracked"].GetInt64() == 3);
  CHECK(s["limit"].GetInt64() == 3);
  CHECK(s["evicted"].GetInt64() == 1);

  SUBCASE("an evicted session seen again starts over and counts as a new one") {
    CHECK(stats.observe_session("b", 0) == 0);  // evicts c
    const auto again = sessions_of(stats);
    CHECK(ids_of(again) == std::set<std::string>{"a", "b", "d"});
    CHECK(again["count"].GetInt64() == 5);
    CHECK(again["evicted"].GetInt64() == 2);
  }
  SUBCASE("clear keeps the limit") {
    stats.clear();
    CHECK(sessions_of(stats)["count"].GetInt64() == 0);
    for (const char* id : {"w", "x", "y", "z"}) stats.observe_session(id, 0);
    CHECK(sessions_of(stats)["tracked"].GetInt64() == 3);
  }
}

TEST_CASE("worker switches are totalled over every session, evicted ones included") {
  Stats stats(2);
  stats.observe_session("moved", 0);
  stats.observe_session("moved", 1);
  stats.observe_session("moved", 0);  // two switches, one session with switches
  stats.observe_session("stayed", 2);
  stats.observe_session("stayed", 2);
  stats.observe_session("later", 3);  // evicts "moved"

  const auto s = sessions_of(stats);
  CHECK(ids_of(s) == std::set<std::string>{"stayed", "later"});
  CHECK(s["worker_switches"].GetInt64() == 2);
  CHECK(s["sessions_with_switches"].GetInt64() == 1);
}

TEST_CASE("a hundred thousand sessions through a limit of a thousand keep a thousand") {
  constexpr int kSessions = 100'000;
  constexpr int kLimit = 1'000;
  Stats stats(kLimit);
  int wrong_turns = 0;
  for (int i = 0; i < kSessions; ++i) {
    // uuid-length ids, each seen twice (a two-turn conversation), on alternating workers
    const std::string id = "00000000-0000-4000-8000-" + std::to_string(100'000'000'000 + i);
    stats.observe_session(id, i % 4);
    if (stats.observe_session(id, i % 4) != 1) ++wrong_turns;
  }
  CHECK(wrong_turns == 0);
  const auto s = sessions_of(stats);
  CHECK(s["count"].GetInt64() == kSessions);
  CHECK(s["tracked"].GetInt64() == kLimit);
  CHECK(s["by_id"].MemberCount() == kLimit);
  CHECK(s["evicted"].GetInt64() == kSessions - kLimit);
  CHECK(s["worker_switches"].GetInt64() == 0);
}

TEST_CASE("--stats-sessions sets the limit and must be at least 1") {
  const auto ok = parse_options({"--stats-sessions", "10"});
  REQUIRE(ok.options);
  CHECK(ok.options->stats_sessions == 10);
  CHECK(parse_options({}).options->stats_sessions ==
        static_cast<int64_t>(Stats::kDefaultSessionLimit));
  const auto bad = parse_options({"--stats-sessions", "0"});
  CHECK_FALSE(bad.options);
  CHECK(bad.exit_code == 2);
}

TEST_CASE("emitted ITL: streamed requests only, mean and quantiles to 5 microseconds") {
  Stats stats;
  for (int i = 0; i < 98; ++i) stats.record_completion(32, 0.0, 5.0);
  stats.record_completion(32, 0.0, 9.0);
  stats.record_completion(32, 0.0, 400.0);  // beyond the histogram: its last bucket
  stats.record_completion(32, 0.0);         // not streamed: not counted
  rapidjson::Document doc;
  doc.Parse(stats.json({}, 0).c_str());
  REQUIRE_FALSE(doc.HasParseError());
  const auto& itl = doc["emitted_itl_ms"];
  CHECK(itl["count"].GetInt64() == 100);
  CHECK(itl["mean"].GetDouble() == doctest::Approx((98 * 5.0 + 9.0 + 400.0) / 100));
  CHECK(itl["p50"].GetDouble() == doctest::Approx(5.0025).epsilon(1e-6));
  CHECK(itl["p99"].GetDouble() == doctest::Approx(9.0025).epsilon(1e-6));
  stats.clear();
  doc.Parse(stats.json({}, 0).c_str());
  CHECK(doc["emitted_itl_ms"]["count"].GetInt64() == 0);
}

}  // namespace
}  // namespace convoy::mock
