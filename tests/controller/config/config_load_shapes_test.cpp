// load.warmup, load.mode users and load.prefill_concurrency: what each reads, its rules with
// file:line:key, and the round trip through to_yaml.
#include <doctest/doctest.h>

#include <string>

#include "controller/config/config.hpp"
#include "controller/config_test_util.hpp"

using convoy::Config;
using convoy::LoadMode;
using convoy::parse_config;
using convoy::test::contains;

TEST_CASE("load.warmup reads its level and its end, and sets the warmup path's end") {
  const Config c = parse_config(
      "load:\n  concurrency: 8\n  warmup: {concurrency: 2, sessions: 5}\n  duration_s: 3\n",
      "c.yaml");
  REQUIRE(c.load.warmup.has_value());
  CHECK(c.load.warmup->concurrency == 2);
  CHECK_FALSE(c.load.warmup->rate.has_value());
  CHECK(c.load.warmup_sessions == 5);  // the run's warmup path ends on it
  CHECK_FALSE(c.load.warmup_s.has_value());
  const std::string yaml = convoy::to_yaml(c);
  CHECK(contains(yaml, "warmup: {concurrency: 2, sessions: 5}"));
  const Config again = parse_config(yaml, "again.yaml");  // not refused as exclusive
  REQUIRE(again.load.warmup.has_value());
  CHECK(again.load.warmup->sessions == 5);
  CHECK(again.load.warmup_sessions == 5);

  SUBCASE("by rate and time") {
    const Config r = parse_config("load:\n  warmup: {rate: 4.5, duration_s: 2}\n", "c.yaml");
    CHECK(r.load.warmup->rate == 4.5);
    CHECK(r.load.warmup_s == 2.0);
    CHECK(r.load.warmup_sessions == 0);
    CHECK(contains(convoy::to_yaml(r), "warmup: {rate: 4.5, duration_s: 2}"));
  }
  SUBCASE("--set reaches it") {
    const Config s = parse_config("load:\n  warmup: {concurrency: 2, sessions: 5}\n", "c.yaml",
                                  {"load.warmup.sessions=9"});
    CHECK(s.load.warmup_sessions == 9);
  }
  CHECK(contains(convoy::to_yaml(Config{}), "warmup: null"));
}

TEST_CASE("load.warmup is checked with file:line:key") {
  CHECK_ERROR("load:\n  warmup_sessions: 3\n  warmup: {concurrency: 2, sessions: 5}\n", "c.yaml:3",
              "load.warmup", "load.warmup_sessions", "exclusive");
  CHECK_ERROR("load:\n  warmup_s: 3\n  warmup: {concurrency: 2, sessions: 5}\n", "c.yaml:3",
              "load.warmup", "load.warmup_s", "exclusive");
  CHECK_ERROR("load:\n  warmup: {concurrency: 2, rate: 3, sessions: 5}\n", "c.yaml:2",
              "load.warmup", "exactly one of concurrency or rate", "both");
  CHECK_ERROR("load:\n  warmup: {sessions: 5}\n", "load.warmup",
              "exactly one of concurrency or rate", "neither");
  CHECK_ERROR("load:\n  warmup: {concurrency: 2}\n", "load.warmup",
              "exactly one of duration_s or sessions", "neither");
  CHECK_ERROR("load:\n  warmup: {concurrency: 2, duration_s: 1, sessions: 1}\n", "load.warmup",
              "exactly one of duration_s or sessions", "both");
  CHECK_ERROR("load:\n  warmup:\n    concurrency: 0\n    sessions: 1\n", "c.yaml:3",
              "load.warmup.concurrency");
  CHECK_ERROR("load:\n  warmup:\n    rate: -1\n    sessions: 1\n", "c.yaml:3", "load.warmup.rate");
  CHECK_ERROR("load:\n  warmup:\n    rate: 1\n    duration_s: 0\n", "c.yaml:4",
              "load.warmup.duration_s");
  CHECK_ERROR("load:\n  warmup: {rate: 1, sesions: 1}\n", "load.warmup", "sesions");
}

TEST_CASE("load.mode users: load.concurrency users, each a gap of concurrency / rate") {
  const Config c = parse_config(
      "load:\n  mode: users\n  concurrency: 6\n  rate: 2\n  duration_s: 5\n", "c.yaml");
  CHECK(c.load.mode == LoadMode::kUsers);
  CHECK(convoy::user_gap_ns(c.load) == 3'000'000'000);  // 6 users / 2 per second
  CHECK(contains(convoy::to_yaml(c), "mode: users"));
  CHECK(parse_config(convoy::to_yaml(c), "again.yaml").load.mode == LoadMode::kUsers);
  // load.rate is read (no "unread key" warning about it).
  for (const auto& w : c.warnings) CHECK_FALSE(contains(w, "load.rate"));

  CHECK_ERROR("load:\n  mode: users\n  rate: 0\n", "c.yaml:3", "load.rate", "--user-centric-rate");
  CHECK_ERROR("load:\n  mode: users\n  sweep: {concurrency: [1, 2], duration_s: 1}\n", "c.yaml:2",
              "load.mode", "users");
  CHECK_ERROR("load:\n  mode: user\n", "load.mode", "users");
}

TEST_CASE("load.prefill_concurrency is a count each worker holds a share of") {
  const Config c = parse_config("load:\n  prefill_concurrency: 3\nworkers: {local: 2}\n", "c.yaml");
  CHECK(c.load.prefill_concurrency == 3);
  CHECK(contains(convoy::to_yaml(c), "prefill_concurrency: 3"));
  CHECK(parse_config(convoy::to_yaml(c), "again.yaml").load.prefill_concurrency == 3);
  CHECK_FALSE(Config{}.load.prefill_concurrency.has_value());
  CHECK(contains(convoy::to_yaml(Config{}), "prefill_concurrency: null"));

  CHECK_ERROR("load:\n  prefill_concurrency: 0\n", "c.yaml:2", "load.prefill_concurrency");
  CHECK_ERROR("load:\n  prefill_concurrency: 1\nworkers: {local: 2}\n", "c.yaml:2",
              "load.prefill_concurrency", "at least 2");
}
