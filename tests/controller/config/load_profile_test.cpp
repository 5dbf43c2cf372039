// controller/config/load_profile.hpp: a stage's level over time, a search step as a stage, and
// the SLO vocabulary.
#include "controller/config/load_profile.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using convoy::LoadConfig;
using convoy::LoadLevel;
using convoy::LoadMode;
using convoy::RampShape;

TEST_CASE("LoadLevel::at of a number is the number") {
  const LoadLevel v{8, 8, RampShape::kLinear, false};
  CHECK(v.at(0) == 8);
  CHECK(v.at(0.5) == 8);
  CHECK(v.at(1) == 8);
}

TEST_CASE("LoadLevel::at follows a linear ramp and clamps the fraction") {
  const LoadLevel up{10, 200, RampShape::kLinear, true};
  CHECK(up.at(0) == 10);
  CHECK(up.at(0.5) == doctest::Approx(105));
  CHECK(up.at(1) == 200);
  CHECK(up.at(-1) == 10);
  CHECK(up.at(2) == 200);
  const LoadLevel down{50, 0, RampShape::kLinear, true};
  CHECK(down.at(0.25) == doctest::Approx(37.5));
  CHECK(down.at(1) == 0);
}

TEST_CASE("LoadLevel::at follows an exponential ramp geometrically") {
  const LoadLevel up{1, 16, RampShape::kExponential, true};
  CHECK(up.at(0) == doctest::Approx(1));
  CHECK(up.at(0.25) == doctest::Approx(2));
  CHECK(up.at(0.5) == doctest::Approx(4));
  CHECK(up.at(1) == doctest::Approx(16));
  const LoadLevel down{100, 1, RampShape::kExponential, true};
  CHECK(down.at(0.5) == doctest::Approx(10));
}

TEST_CASE("search_step makes a concurrency step") {
  LoadConfig load;
  load.rate = 3;
  convoy::SearchConfig search;
  search.step_duration_s = 30;
  search.settle_s = 4;
  load.search = search;
  const convoy::StageConfig s = convoy::search_step(load, 8, 2);
  CHECK(s.name == "concurrency=8");
  CHECK(s.index == 2);
  CHECK(s.mode == LoadMode::kConcurrency);
  CHECK(s.concurrency.from == 8);
  CHECK_FALSE(s.concurrency.ramp);
  CHECK(s.value == 8);
  CHECK(s.duration_s == 30);
  CHECK_FALSE(s.requests.has_value());
  CHECK(s.settle_s == 4);
  // bisection midpoints are whole slot counts
  CHECK(convoy::search_step(load, 6.5, 0).concurrency.from == 7);
  CHECK(convoy::search_step(load, 6.5, 0).name == "concurrency=7");
}

TEST_CASE("search_step makes a rate step capped at load.concurrency") {
  LoadConfig load;
  load.concurrency = 40;
  load.arrival = convoy::Arrival::kGamma;
  load.burstiness = 0.5;
  convoy::SearchConfig search;
  search.vary = LoadMode::kRate;
  search.step_requests = 500;
  load.search = search;
  const convoy::StageConfig s = convoy::search_step(load, 2.5, 0);
  CHECK(s.name == "rate=2.5");
  CHECK(s.mode == LoadMode::kRate);
  CHECK(s.rate.from == 2.5);
  CHECK(s.concurrency.from == 40);
  CHECK(s.arrival == convoy::Arrival::kGamma);
  CHECK(s.burstiness == 0.5);
  CHECK(s.requests == 500);
  CHECK_FALSE(s.duration_s.has_value());
  CHECK(s.value == 2.5);
}

TEST_CASE("the SLO vocabulary is summary.json's") {
  const auto stats = convoy::known_slo_statistics();
  for (const char* s : {"avg", "min", "max", "p50", "p90", "p95", "p99"}) {
    CHECK(std::find(stats.begin(), stats.end(), s) != stats.end());
  }
  CHECK(std::find(stats.begin(), stats.end(), "p98") == stats.end());
  const auto metrics = convoy::known_slo_metrics();
  CHECK(std::find(metrics.begin(), metrics.end(), "time_to_first_token") != metrics.end());
  CHECK(std::find(metrics.begin(), metrics.end(), "inter_token_latency") != metrics.end());
}

TEST_CASE("ramp shape and profile kind names") {
  CHECK(std::string(convoy::to_string(RampShape::kLinear)) == "linear");
  CHECK(std::string(convoy::to_string(RampShape::kExponential)) == "exponential");
  CHECK(std::string(convoy::to_string(convoy::ProfileKind::kSingle)) == "single");
  CHECK(std::string(convoy::to_string(convoy::ProfileKind::kSearch)) == "search");
  CHECK(std::string(convoy::to_string(convoy::ProfileKind::kSweep)) == "sweep");
  CHECK(std::string(convoy::to_string(convoy::ProfileKind::kStages)) == "stages");
}
