// The expected duration `convoy validate` prints: time-bound parts add up (warmup, stages,
// settles at their longest, the drain), count-bound parts are named, and a search's step count
// comes from the bisection itself.
#include <doctest/doctest.h>

#include <string>

#include "controller/config/config.hpp"
#include "controller/run/capacity_search.hpp"
#include "controller/run/expected_duration.hpp"

using convoy::Config;
using convoy::parse_config;
using convoy::controller::expected_duration;
using convoy::controller::expected_duration_line;
using convoy::controller::human_seconds;

namespace {

Config duration_config(const std::string& text) { return parse_config(text, "c.yaml"); }

bool has_text(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The most steps any sequence of outcomes takes, by trying every one (small brackets only).
int most_search_steps(convoy::controller::CapacitySearch s) {
  auto next = s.next();
  if (!next) return s.steps();
  convoy::controller::CapacitySearch met = s;
  met.record(*next, true);
  s.record(*next, false);
  return std::max(most_search_steps(met), most_search_steps(s));
}

}  // namespace

TEST_CASE("human_seconds: seconds, minutes, hours") {
  CHECK(human_seconds(45) == "45 s");
  CHECK(human_seconds(2.5) == "2.5 s");
  CHECK(human_seconds(150) == "2 min 30 s");
  CHECK(human_seconds(120) == "2 min");
  CHECK(human_seconds(3900) == "1 h 5 min");
  CHECK(human_seconds(7200) == "2 h");
}

TEST_CASE("expected duration: a timed single level is its duration, plus the drain at most") {
  const auto e = expected_duration(duration_config("load: {duration_s: 60, warmup_s: 10}\n"));
  CHECK(e.min_s == doctest::Approx(70));
  CHECK(e.max_s == doctest::Approx(100));  // load.grace_s 30
  CHECK(e.counted.empty());
  const std::string line =
      expected_duration_line(duration_config("load: {duration_s: 60, warmup_s: 10}\n"));
  CHECK(has_text(line, "expected duration: between 1 min 10 s and 1 min 40 s"));
  CHECK(has_text(line, "warmup 10 s"));
  CHECK(has_text(line, "1 min of load (load.duration_s)"));
}

TEST_CASE("expected duration: a run bound by requests says so, not a time") {
  const std::string line = expected_duration_line(duration_config("load: {requests: 1000}\n"));
  CHECK(line ==
        "expected duration: until 1000 requests are sent and answered (load.requests): not bound "
        "by time");
  const std::string sessions =
      expected_duration_line(duration_config("load: {mode: rate, rate: 4, sessions: 100}\n"));
  CHECK(has_text(sessions, "between 25 s and 55 s"));
  CHECK(has_text(sessions, "100 conversations started at 4/s"));
  const std::string dataset =
      expected_duration_line(duration_config("dataset: {conversations: 7}\n"));
  CHECK(has_text(dataset, "until the dataset's 7 conversations have run"));
}

TEST_CASE("expected duration: a sweep adds its steps and settles") {
  const Config c = duration_config(
      "load:\n  warmup_s: 5\n  grace_s: 10\n"
      "  sweep: {concurrency: [1, 2, 4, 8], duration_s: 30, settle_s: 5}\n");
  const auto e = expected_duration(c);
  CHECK(e.min_s == doctest::Approx(5 + 4 * 30));
  CHECK(e.max_s == doctest::Approx(5 + 4 * 30 + 3 * 5 + 10));  // no settle after the last step
  const std::string line = expected_duration_line(c);
  CHECK(has_text(line, "between 2 min 5 s and 2 min 30 s"));
  CHECK(has_text(line, "4 steps of 30 s"));
}

TEST_CASE("expected duration: stages bound by a count are named beside the timed ones") {
  const std::string line = expected_duration_line(duration_config(
      "load:\n  stages:\n    - {name: base, concurrency: 2, duration_s: 60, settle_s: 10}\n"
      "    - {name: spike, mode: rate, rate: 50, requests: 500}\n"));
  CHECK(has_text(line, "between 1 min and"));
  CHECK(has_text(line, "'spike' until 500 requests are sent"));
}

TEST_CASE("expected duration: a search's steps come from the bisection, its worst case included") {
  const Config c = duration_config(
      "load:\n  grace_s: 5\n  search: {vary: concurrency, low: 1, high: 64, step_duration_s: 20,\n"
      "           precision: 0.05, settle_s: 2, slo: {error_rate: 0.01}}\n");
  const auto e = expected_duration(c);
  const int most = most_search_steps(convoy::controller::CapacitySearch(*c.load.search));
  CHECK(e.steps_max == most);
  CHECK(e.steps_min >= 2);
  CHECK(e.steps_min <= e.steps_max);
  CHECK(e.min_s == doctest::Approx(20.0 * e.steps_min));
  // each step waits up to grace_s 5, and one within the SLO's noise runs up to 1 + repeats (2)
  CHECK(e.max_s == doctest::Approx(25.0 * e.steps_max * 3));
  const std::string line = expected_duration_line(c);
  CHECK(has_text(line,
                 std::to_string(e.steps_min) + " to " + std::to_string(e.steps_max) + " steps"));
  CHECK(has_text(line, "of 20 s"));
  CHECK(has_text(line, "run up to 3 times (search.repeats)"));
  SUBCASE("repeats 0: each step once") {
    const Config once = duration_config(
        "load:\n  grace_s: 5\n  search: {vary: concurrency, low: 1, high: 64, step_duration_s: "
        "20,\n           precision: 0.05, settle_s: 2, repeats: 0, slo: {error_rate: 0.01}}\n");
    CHECK(expected_duration(once).max_s == doctest::Approx(25.0 * e.steps_max));
  }

  SUBCASE("rate: the longest path is the one where every midpoint misses") {
    const Config r = duration_config(
        "load:\n  search: {vary: rate, low: 1, high: 40, step_duration_s: 10, precision: 0.1,\n"
        "           slo: {error_rate: 0.01}}\n");
    const int worst = most_search_steps(convoy::controller::CapacitySearch(*r.load.search));
    CHECK(expected_duration(r).steps_max == worst);
  }
}

TEST_CASE("expected duration: load.trials runs the whole profile that many times") {
  const Config one = duration_config(
      "load:\n  warmup_s: 5\n  grace_s: 10\n"
      "  sweep: {concurrency: [1, 2], duration_s: 30, settle_s: 5}\n");
  const Config three = duration_config(
      "load:\n  trials: 3\n  warmup_s: 5\n  grace_s: 10\n"
      "  sweep: {concurrency: [1, 2], duration_s: 30, settle_s: 5}\n");
  const auto a = expected_duration(one);
  const auto b = expected_duration(three);
  CHECK(b.min_s == doctest::Approx(3 * a.min_s));
  CHECK(b.max_s == doctest::Approx(3 * a.max_s));
  CHECK(has_text(expected_duration_line(three), "3 trials (load.trials), each: warmup 5 s"));
  const std::string counted =
      expected_duration_line(duration_config("load: {requests: 100, trials: 2}\n"));
  CHECK(has_text(counted, "each of 2 trials: until 100 requests are sent"));
}
