// load.stages, load.sweep, load.search, load.abort_on and load.warmup_s:
// parsing, resolution against the load.* defaults, and each validation rule.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <string>
#include <vector>

#include "controller/config/config.hpp"

using convoy::Config;
using convoy::ConfigError;
using convoy::LoadMode;
using convoy::parse_config;
using convoy::ProfileKind;

namespace {

using convoy::test::contains;
using convoy::test::error_of;

const char* const kThreeStages = R"(load:
  concurrency: 12
  rate: 7
  arrival: gamma
  burstiness: 0.5
  stages:
    - {name: base,  mode: concurrency, concurrency: 8, duration_s: 60}
    - {name: ramp,  mode: rate, rate: {from: 10, to: 200, shape: linear}, duration_s: 120, settle_s: 10}
    - {name: spike, mode: rate, rate: 500, arrival: poisson, requests: 5000}
    - {mode: rate, sessions: 3}
)";

}  // namespace

TEST_CASE("a config without a profile is a single level with no stages") {
  const Config c = parse_config("load: {concurrency: 4, duration_s: 10}\n", "c.yaml");
  CHECK(c.load.profile == ProfileKind::kSingle);
  CHECK(c.load.stages.empty());
  CHECK_FALSE(c.load.search.has_value());
  CHECK_FALSE(c.load.sweep.has_value());
  CHECK_FALSE(c.load.abort_on.has_value());
  CHECK_FALSE(c.load.warmup_s.has_value());
}

TEST_CASE("load.stages resolves every stage from the load defaults") {
  const Config c = parse_config(kThreeStages, "c.yaml");
  REQUIRE(c.load.profile == ProfileKind::kStages);
  REQUIRE(c.load.stages.size() == 4);
  const auto& base = c.load.stages[0];
  CHECK(base.name == "base");
  CHECK(base.index == 0);
  CHECK(base.line == 7);
  CHECK(base.mode == LoadMode::kConcurrency);
  CHECK(base.concurrency.from == 8);
  CHECK_FALSE(base.concurrency.ramp);
  CHECK(base.duration_s == 60);
  CHECK(base.value == 8);
  CHECK(base.settle_s == 0);

  const auto& ramp = c.load.stages[1];
  CHECK(ramp.mode == LoadMode::kRate);
  CHECK(ramp.rate.ramp);
  CHECK(ramp.rate.from == 10);
  CHECK(ramp.rate.to == 200);
  CHECK(ramp.rate.shape == convoy::RampShape::kLinear);
  CHECK(ramp.concurrency.from == 12);  // the cap: load.concurrency
  CHECK(ramp.arrival == convoy::Arrival::kGamma);
  CHECK(ramp.burstiness == 0.5);
  CHECK(ramp.settle_s == 10);
  CHECK(ramp.value == 200);

  const auto& spike = c.load.stages[2];
  CHECK(spike.arrival == convoy::Arrival::kPoisson);
  CHECK(spike.requests == 5000);
  CHECK_FALSE(spike.duration_s.has_value());
  CHECK(spike.value == 500);

  const auto& unnamed = c.load.stages[3];
  CHECK(unnamed.name == "stage-4");
  CHECK(unnamed.rate.from == 7);  // load.rate
  CHECK(unnamed.sessions == 3);
}

TEST_CASE("a stage's mode defaults to load.mode") {
  const Config c =
      parse_config("load:\n  mode: rate\n  rate: 3\n  stages:\n    - {duration_s: 5}\n", "c.yaml");
  REQUIRE(c.load.stages.size() == 1);
  CHECK(c.load.stages[0].mode == LoadMode::kRate);
  CHECK(c.load.stages[0].rate.from == 3);
}

TEST_CASE("load.stages must be a non-empty list of mappings") {
  CHECK_ERROR("load:\n  stages: []\n", "c.yaml:2: load.stages: the stage list is empty");
  CHECK_ERROR("load:\n  stages: {name: a}\n", "load.stages: expected a list of stages");
  CHECK_ERROR("load:\n  stages:\n    - 5\n", "c.yaml:3: load.stages[0]: expected a mapping");
}

TEST_CASE("a stage has exactly one end") {
  CHECK_ERROR("load:\n  stages:\n    - {name: a, concurrency: 2}\n",
              "c.yaml:3: load.stages[0]: a stage needs one end: duration_s, sessions or requests");
  CHECK_ERROR(
      "load:\n  stages:\n    - {name: a, duration_s: 5}\n    - {name: b,\n"
      "       duration_s: 5,\n       requests: 9}\n",
      "c.yaml:6: load.stages[1].requests: a stage has one end: duration_s and requests");
}

TEST_CASE("a stage end is positive") {
  CHECK_ERROR("load:\n  stages:\n    - {duration_s: 0}\n", "load.stages[0].duration_s: must be");
  CHECK_ERROR("load:\n  stages:\n    - {sessions: 0}\n", "load.stages[0].sessions: must be");
  CHECK_ERROR("load:\n  stages:\n    - {requests: -1}\n", "load.stages[0].requests: must be");
  CHECK_ERROR("load:\n  stages:\n    - {requests: 1, settle_s: -1}\n",
              "load.stages[0].settle_s: must be at least 0");
}

TEST_CASE("a ramp needs duration_s") {
  CHECK_ERROR("load:\n  stages:\n    - {mode: rate, rate: {from: 1, to: 5}, sessions: 10}\n",
              "load.stages[0].rate: a ramp needs duration_s");
  CHECK_ERROR("load:\n  stages:\n    - {concurrency: {from: 1, to: 5}, requests: 10}\n",
              "load.stages[0].concurrency: a ramp needs duration_s");
}

TEST_CASE("a ramp's from and to have one sign and both exist") {
  CHECK_ERROR("load:\n  stages:\n    - {mode: rate, rate: {from: -1, to: 5}, duration_s: 9}\n",
              "load.stages[0].rate.to: from (-1) and to (5) have different signs");
  CHECK_ERROR("load:\n  stages:\n    - {mode: rate, rate: {from: 1}, duration_s: 9}\n",
              "load.stages[0].rate: a ramp needs `to`");
  CHECK_ERROR("load:\n  stages:\n    - {mode: rate, rate: {from: 0, to: 0}, duration_s: 9}\n",
              "a ramp from 0 to 0");
  CHECK_ERROR(
      "load:\n  stages:\n    - {mode: rate, rate: {from: 1, to: 2, shape: cubic},"
      " duration_s: 9}\n",
      "load.stages[0].rate.shape: expected one of linear, exponential");
  CHECK_ERROR(
      "load:\n  stages:\n    - {mode: rate, rate: {from: 0, to: 8, shape: exponential},"
      " duration_s: 9}\n",
      "load.stages[0].rate.shape: an exponential ramp needs from and to greater than 0");
  CHECK_ERROR(
      "load:\n  stages:\n    - {mode: rate, rate: {from: 1, to: 2, step: 3},"
      " duration_s: 9}\n",
      "load.stages[0].rate.step: unknown key");
}

TEST_CASE("a rate ramp may start or end at 0, a concurrency ramp may not") {
  const Config c = parse_config(
      "load:\n  stages:\n    - {mode: rate, rate: {from: 0, to: 50}, duration_s: 9}\n", "c.yaml");
  CHECK(c.load.stages[0].rate.from == 0);
  CHECK_ERROR("load:\n  stages:\n    - {concurrency: {from: 0, to: 4}, duration_s: 9}\n",
              "load.stages[0].concurrency.from: must be a whole number of conversations");
}

TEST_CASE("a stage's levels are checked") {
  CHECK_ERROR("load:\n  stages:\n    - {concurrency: 2.5, duration_s: 9}\n",
              "load.stages[0].concurrency: must be a whole number of conversations, at least 1");
  CHECK_ERROR("load:\n  stages:\n    - {mode: rate, rate: 0, duration_s: 9}\n",
              "load.stages[0].rate: must be greater than 0");
  CHECK_ERROR("load:\n  stages:\n    - {mode: rate, rate: fast, duration_s: 9}\n",
              "load.stages[0].rate: expected a number or {from, to, shape}");
  CHECK_ERROR(
      "load:\n  stages:\n    - {mode: rate, concurrency: {from: 1, to: 4},"
      " duration_s: 9}\n",
      "load.stages[0].concurrency: expected a number (a cap, not a ramp)");
  CHECK_ERROR("load:\n  stages:\n    - {mode: trace, duration_s: 9}\n",
              "load.stages[0].mode: expected one of concurrency, rate");
  CHECK_ERROR("load:\n  stages:\n    - {mode: rate, burstiness: 0, duration_s: 9}\n",
              "load.stages[0].burstiness: must be greater than 0");
}

TEST_CASE("a concurrency stage takes no rate, arrival or burstiness") {
  for (const char* key : {"rate: 5", "arrival: poisson", "burstiness: 2"}) {
    CAPTURE(key);
    CHECK_ERROR(std::string("load:\n  stages:\n    - {duration_s: 9, ") + key + "}\n",
                "only for mode rate stages");
  }
}

TEST_CASE("stage names are unique and not empty") {
  CHECK_ERROR("load:\n  stages:\n    - {name: a, duration_s: 1}\n    - {name: a, duration_s: 1}\n",
              "c.yaml:4: load.stages[1].name: duplicate stage name 'a' (also stages[0])");
  CHECK_ERROR("load:\n  stages:\n    - {name: \"\", duration_s: 1}\n",
              "load.stages[0].name: must not be empty");
}

TEST_CASE("an unknown key in a stage is named with its line and a suggestion") {
  CHECK_ERROR(
      "load:\n  stages:\n    - {duration_s: 1}\n    - {duration_s: 1,\n"
      "       setle_s: 2}\n",
      "c.yaml:5: load.stages[1].setle_s: unknown key; did you mean "
      "'load.stages[1].settle_s'?");
}

TEST_CASE("load.sweep expands to stages named after their value") {
  SUBCASE("concurrency") {
    const Config c = parse_config(
        "load:\n  rate: 4\n  sweep:\n    concurrency: [1, 2, 4]\n    duration_s: 60\n"
        "    settle_s: 5\n",
        "c.yaml");
    REQUIRE(c.load.profile == ProfileKind::kSweep);
    REQUIRE(c.load.sweep.has_value());
    CHECK(c.load.sweep->values == std::vector<double>{1, 2, 4});
    REQUIRE(c.load.stages.size() == 3);
    CHECK(c.load.stages[0].name == "concurrency=1");
    CHECK(c.load.stages[2].name == "concurrency=4");
    for (int i = 0; i < 3; ++i) {
      const auto& st = c.load.stages[static_cast<size_t>(i)];
      CHECK(st.index == i);
      CHECK(st.mode == LoadMode::kConcurrency);
      CHECK(st.duration_s == 60);
      CHECK(st.value == st.concurrency.from);
      CHECK(st.settle_s == (i < 2 ? 5 : 0));  // between steps only
    }
  }
  SUBCASE("rate") {
    const Config c = parse_config(
        "load:\n  concurrency: 64\n  arrival: constant\n  sweep: {rate: [0.5, 2.5], requests: "
        "100}\n",
        "c.yaml");
    REQUIRE(c.load.stages.size() == 2);
    CHECK(c.load.stages[0].name == "rate=0.5");
    CHECK(c.load.stages[1].name == "rate=2.5");
    CHECK(c.load.stages[1].mode == LoadMode::kRate);
    CHECK(c.load.stages[1].rate.from == 2.5);
    CHECK(c.load.stages[1].concurrency.from == 64);
    CHECK(c.load.stages[1].arrival == convoy::Arrival::kConstant);
    CHECK(c.load.stages[1].requests == 100);
  }
}

TEST_CASE("load.sweep has one non-empty list of distinct values") {
  CHECK_ERROR("load:\n  sweep: {duration_s: 5}\n",
              "c.yaml:2: load.sweep: needs concurrency: [values] or rate: [values]");
  CHECK_ERROR("load:\n  sweep: {concurrency: [1], rate: [2], duration_s: 5}\n",
              "load.sweep.rate: a sweep varies one thing");
  CHECK_ERROR("load:\n  sweep: {concurrency: [], duration_s: 5}\n",
              "load.sweep.concurrency: the list of values is empty");
  CHECK_ERROR("load:\n  sweep: {concurrency: 4, duration_s: 5}\n",
              "load.sweep.concurrency: expected a list of values");
  CHECK_ERROR("load:\n  sweep: {concurrency: [1, 2, 2], duration_s: 5}\n",
              "load.sweep.concurrency[2]: duplicate value 2");
  CHECK_ERROR("load:\n  sweep: {concurrency: [1, 1.5], duration_s: 5}\n",
              "load.sweep.concurrency[1]: must be a whole number");
  CHECK_ERROR("load:\n  sweep: {rate: [1, -2], duration_s: 5}\n",
              "load.sweep.rate[1]: must be greater than 0");
}

TEST_CASE("a sweep step has exactly one end") {
  CHECK_ERROR("load:\n  sweep: {concurrency: [1, 2]}\n",
              "load.sweep: a sweep step needs one end: duration_s, sessions or requests");
  CHECK_ERROR("load:\n  sweep: {concurrency: [1, 2], sessions: 3, requests: 4}\n",
              "load.sweep.requests: a sweep step has one end: sessions and requests");
}

TEST_CASE("load.search is read with its SLO") {
  const Config c = parse_config(R"(load:
  search:
    vary: rate
    low: 0.5
    high: 64
    step_requests: 200
    precision: 0.1
    settle_s: 3
    slo: {time_to_first_token: {p99: 500}, inter_token_latency: {p50: 20, p99: 50}, error_rate: 0.01}
)",
                                "c.yaml");
  REQUIRE(c.load.profile == ProfileKind::kSearch);
  CHECK(c.load.stages.empty());
  REQUIRE(c.load.search.has_value());
  const auto& s = *c.load.search;
  CHECK(s.vary == LoadMode::kRate);
  CHECK(s.low == 0.5);
  CHECK(s.high == 64);
  CHECK(s.step_requests == 200);
  CHECK_FALSE(s.step_duration_s.has_value());
  CHECK(s.precision == 0.1);
  CHECK(s.settle_s == 3);
  CHECK(s.slo.limits.at("time_to_first_token").at("p99") == 500);
  CHECK(s.slo.limits.at("inter_token_latency").at("p50") == 20);
  CHECK(s.slo.limits.at("inter_token_latency").size() == 2);
  CHECK(s.slo.error_rate == 0.01);
}

TEST_CASE("load.search low is less than high") {
  CHECK_ERROR("load:\n  search: {low: 8, high: 8, step_duration_s: 5, slo: {error_rate: 0.1}}\n",
              "load.search.low: must be less than high (8), got 8");
  CHECK_ERROR("load:\n  search: {low: 9, high: 2, step_duration_s: 5, slo: {error_rate: 0.1}}\n",
              "load.search.low: must be less than high");
  CHECK_ERROR("load:\n  search: {low: 0, high: 8, step_duration_s: 5, slo: {error_rate: 0.1}}\n",
              "load.search.low: must be a whole number of conversations, at least 1");
  CHECK_ERROR(
      "load:\n  search: {vary: rate, low: 0, high: 8, step_duration_s: 5,"
      " slo: {error_rate: 0.1}}\n",
      "load.search.low: must be greater than 0");
}

TEST_CASE("load.search precision is in (0, 1)") {
  for (const char* p : {"0", "1", "1.5", "-0.1"}) {
    CAPTURE(p);
    CHECK_ERROR(std::string("load:\n  search: {step_duration_s: 5, slo: {error_rate: 0.1}, "
                            "precision: ") +
                    p + "}\n",
                "load.search.precision: must be between 0 and 1 (exclusive)");
  }
}

TEST_CASE("load.search has exactly one step end") {
  CHECK_ERROR("load:\n  search: {slo: {error_rate: 0.1}}\n",
              "load.search: a search step needs one end: step_duration_s or step_requests");
  CHECK_ERROR("load:\n  search: {step_duration_s: 5, step_requests: 9, slo: {error_rate: 0.1}}\n",
              "load.search.step_requests: a search step has one end");
}

TEST_CASE("load.search slo names known metric tags and statistics") {
  CHECK_ERROR("load:\n  search:\n    step_duration_s: 5\n    slo: {time_to_first_tokn: {p99: 5}}\n",
              "c.yaml:4: load.search.slo.time_to_first_tokn: unknown key; did you mean "
              "'load.search.slo.time_to_first_token'?");
  CHECK_ERROR("load:\n  search: {step_duration_s: 5, slo: {output_token_throughput: {avg: 5}}}\n",
              "load.search.slo.output_token_throughput: unknown key");
  CHECK_ERROR("load:\n  search: {step_duration_s: 5, slo: {request_latency: {p98: 5}}}\n",
              "load.search.slo.request_latency.p98: unknown key");
  CHECK_ERROR("load:\n  search: {step_duration_s: 5, slo: {request_latency: {p99: 0}}}\n",
              "load.search.slo.request_latency.p99: must be greater than 0 (ms)");
  CHECK_ERROR("load:\n  search: {step_duration_s: 5, slo: {request_latency: {}}}\n",
              "load.search.slo.request_latency: name at least one statistic");
  CHECK_ERROR("load:\n  search: {step_duration_s: 5}\n", "load.search.slo: a search needs an SLO");
}

TEST_CASE("load.search slo error_rate is in [0, 1]") {
  CHECK_ERROR("load:\n  search: {step_duration_s: 5, slo: {error_rate: 1.5}}\n",
              "load.search.slo.error_rate: must be between 0 and 1");
  const Config c =
      parse_config("load:\n  search: {step_duration_s: 5, slo: {error_rate: 0}}\n", "c.yaml");
  CHECK(c.load.search->slo.error_rate == 0);
}

TEST_CASE("stages, sweep and search are mutually exclusive") {
  CHECK_ERROR("load:\n  stages: [{duration_s: 1}]\n  sweep: {concurrency: [1], duration_s: 1}\n",
              "c.yaml:3: load.sweep: load.stages and load.sweep are exclusive");
  CHECK_ERROR(
      "load:\n  sweep: {concurrency: [1], duration_s: 1}\n"
      "  search: {step_duration_s: 5, slo: {error_rate: 0.1}}\n",
      "c.yaml:3: load.search: load.sweep and load.search are exclusive");
  // null is unset
  const Config c = parse_config(
      "load:\n  stages: null\n  sweep: {concurrency: [1], duration_s: 1}\n  search: null\n",
      "c.yaml");
  CHECK(c.load.profile == ProfileKind::kSweep);
}

TEST_CASE("a profile excludes top-level duration_s, sessions and requests") {
  CHECK_ERROR("load:\n  duration_s: 60\n  stages: [{duration_s: 1}]\n",
              "c.yaml:2: load.duration_s: not with load.stages: each stage ends by its own");
  CHECK_ERROR("load:\n  sessions: 6\n  sweep: {concurrency: [1], duration_s: 1}\n",
              "load.sessions: not with load.sweep");
  CHECK_ERROR("load:\n  requests: 6\n  search: {step_duration_s: 5, slo: {error_rate: 0.1}}\n",
              "load.requests: not with load.search: each step ends by its own step_duration_s");
  // concurrency and rate stay: they are the defaults
  CHECK_NOTHROW(
      parse_config("load:\n  concurrency: 3\n  rate: 2\n  stages: [{duration_s: 1}]\n", "c.yaml"));
}

TEST_CASE("trace mode cannot run a profile") {
  CHECK_ERROR(
      "dataset: {type: jsonl, path: /dev/null}\nload:\n  mode: trace\n"
      "  stages: [{duration_s: 1}]\n",
      "load.mode: trace replays recorded timestamps and cannot run load.stages");
}

TEST_CASE("load.abort_on is read and checked") {
  const Config c = parse_config("load:\n  abort_on: {error_rate: 0.25}\n", "c.yaml");
  REQUIRE(c.load.abort_on.has_value());
  CHECK(c.load.abort_on->error_rate == 0.25);
  CHECK(c.load.abort_on->window_s == 10);
  CHECK(c.load.abort_on->min_requests == 50);
  const Config d = parse_config("load:\n  abort_on: {window_s: 2.5, min_requests: 7}\n", "c.yaml");
  CHECK(d.load.abort_on->error_rate == 0.5);
  CHECK(d.load.abort_on->window_s == 2.5);
  CHECK(d.load.abort_on->min_requests == 7);
  CHECK_ERROR("load:\n  abort_on: {error_rate: 0}\n", "load.abort_on.error_rate: must be greater");
  CHECK_ERROR("load:\n  abort_on: {error_rate: 1.1}\n", "load.abort_on.error_rate: must be");
  CHECK_ERROR("load:\n  abort_on: {window_s: 0}\n", "load.abort_on.window_s: must be greater");
  CHECK_ERROR("load:\n  abort_on: {min_requests: 0}\n", "load.abort_on.min_requests: must be");
  CHECK_ERROR("load:\n  abort_on: {eror_rate: 0.2}\n",
              "load.abort_on.eror_rate: unknown key; did you mean 'load.abort_on.error_rate'?");
}

TEST_CASE("load.warmup_s is positive and exclusive with warmup_sessions") {
  const Config c = parse_config("load:\n  warmup_s: 5\n", "c.yaml");
  CHECK(c.load.warmup_s == 5);
  CHECK_ERROR("load:\n  warmup_s: 0\n", "c.yaml:2: load.warmup_s: must be greater than 0");
  CHECK_ERROR("load:\n  warmup_sessions: 3\n  warmup_s: 5\n",
              "c.yaml:3: load.warmup_s: warmup by time or by sessions, not both");
  CHECK_NOTHROW(parse_config("load:\n  warmup_sessions: 0\n  warmup_s: 5\n", "c.yaml"));
}

TEST_CASE("profiles print in to_yaml and read back the same") {
  for (const std::string& text :
       {std::string(kThreeStages),
        std::string("load:\n  sweep: {concurrency: [1, 8], sessions: 4, settle_s: 2}\n"),
        std::string("load:\n  sweep: {rate: [1.5], duration_s: 4}\n  abort_on: {}\n"),
        std::string("load:\n  warmup_s: 2.5\n  search:\n    high: 64\n    step_duration_s: 30\n"
                    "    slo: {time_to_first_token: {p99: 500, avg: 100}, error_rate: 0.01}\n"),
        std::string("load:\n  stages:\n    - {concurrency: {from: 1, to: 16, shape: exponential},"
                    " duration_s: 9}\n")}) {
    CAPTURE(text);
    const Config a = parse_config(text, "a.yaml");
    const std::string yaml = convoy::to_yaml(a);
    const Config b = parse_config(yaml, "a.yaml");
    CHECK(convoy::to_yaml(b) == yaml);
    CHECK(b.load.profile == a.load.profile);
    REQUIRE(b.load.stages.size() == a.load.stages.size());
    for (size_t i = 0; i < a.load.stages.size(); ++i) {
      CHECK(b.load.stages[i].name == a.load.stages[i].name);
      CHECK(b.load.stages[i].value == a.load.stages[i].value);
      CHECK(b.load.stages[i].settle_s == a.load.stages[i].settle_s);
      CHECK(b.load.stages[i].rate.ramp == a.load.stages[i].rate.ramp);
      CHECK(b.load.stages[i].concurrency.shape == a.load.stages[i].concurrency.shape);
    }
    CHECK(b.load.search.has_value() == a.load.search.has_value());
    CHECK(b.load.abort_on.has_value() == a.load.abort_on.has_value());
    CHECK(b.load.warmup_s == a.load.warmup_s);
  }
  const std::string yaml = convoy::to_yaml(
      parse_config("load:\n  sweep: {concurrency: [1, 8], sessions: 4}\n", "a.yaml"));
  CHECK(contains(yaml, "  sweep:\n    concurrency: [1, 8]\n"));
  CHECK(contains(yaml,
                 "#   - {name: \"concurrency=8\", mode: concurrency, concurrency: 8, "
                 "sessions: 4, settle_s: 0}"));
  CHECK(contains(convoy::to_yaml(Config{}),
                 "  stages: null\n  sweep: null\n  search: null\n"
                 "  abort_on: null\n"));
}

TEST_CASE("--set writes the new scalar load keys") {
  const Config c =
      parse_config("load:\n  search: {step_duration_s: 5, slo: {error_rate: 0.1}}\n", "c.yaml",
                   {"load.warmup_s=3", "load.search.precision=0.2", "load.search.high=64",
                    "load.abort_on.error_rate=0.3", "load.search.slo.time_to_first_token.p99=250"});
  CHECK(c.load.warmup_s == 3);
  CHECK(c.load.search->precision == 0.2);
  CHECK(c.load.search->high == 64);
  CHECK(c.load.abort_on->error_rate == 0.3);
  CHECK(c.load.search->slo.limits.at("time_to_first_token").at("p99") == 250);
  const Config sweep =
      parse_config("", "c.yaml", {"load.sweep.concurrency=[1, 4, 16]", "load.sweep.duration_s=30"});
  REQUIRE(sweep.load.stages.size() == 3);
  CHECK(sweep.load.stages[2].name == "concurrency=16");
  CHECK(sweep.load.stages[2].duration_s == 30);
  CHECK(contains(error_of("", {"load.search.precision=2"}), "--set load.search.precision=2"));
  CHECK(
      contains(error_of("", {"load.abort_on.window=3"}), "did you mean 'load.abort_on.window_s'?"));
}
