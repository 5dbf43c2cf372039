// Numbers that parse but cannot be run are refused at load, naming file, line
// and key (controller/config/limits.hpp holds every range; docs/config.md lists them).
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "common/duration.hpp"
#include "controller/config/limits.hpp"
#include "controller/config_test_util.hpp"
#include "controller/run/schedule.hpp"

TEST_CASE("concurrency has an upper bound, named at its key") {
  CHECK_ERROR("load:\n  sweep: {concurrency: [1000000000], duration_s: 1}\n",
              "c.yaml:2: load.sweep.concurrency[0]: out of range: got 1000000000",
              "[1, 100000] conversations");
  CHECK_ERROR("load:\n  concurrency: 4294967297\n", "c.yaml:2: load.concurrency: out of range");
  CHECK_ERROR("load:\n  sweep:\n    concurrency: [2, 99999999999999999999]\n    duration_s: 1\n",
              "c.yaml:3: load.sweep.concurrency[1]: out of range: got 1e+20");
  CHECK_ERROR("load:\n  stages:\n    - {concurrency: {from: 1, to: 200000}, duration_s: 5}\n",
              "c.yaml:3: load.stages[0].concurrency.to: out of range");
  CHECK_ERROR("load:\n  search: {low: 1, high: 1e6, step_duration_s: 1, slo: {error_rate: 0.1}}\n",
              "load.search.high: out of range");
  // The bound itself is fine.
  CHECK(convoy::parse_config("load:\n  concurrency: 100000\n", "c.yaml").load.concurrency ==
        convoy::limits::kMaxConcurrency);
}

TEST_CASE("durations that overflow int64 nanoseconds are refused") {
  CHECK_ERROR("telemetry:\n  interval_s: 1e10\n", "c.yaml:2: telemetry.interval_s: out of range");
  CHECK_ERROR("load:\n  duration_s: 1e300\n", "c.yaml:2: load.duration_s: out of range");
  CHECK_ERROR("load:\n  warmup_s: 1e300\n", "c.yaml:2: load.warmup_s: out of range");
  CHECK_ERROR("load:\n  grace_s: 1e300\n", "c.yaml:2: load.grace_s: out of range");
  CHECK_ERROR("load:\n  cancel: {fraction: 0.5, after_ms: 1e300}\n",
              "c.yaml:2: load.cancel.after_ms: out of range");
  CHECK_ERROR("dataset:\n  think_time_ms: 1e300\n", "c.yaml:2: dataset.think_time_ms.mean");
  CHECK_ERROR("dataset:\n  think_time_ms: {mean: 5, stddev: 1e300}\n",
              "dataset.think_time_ms.stddev: out of range");
  CHECK_ERROR("output:\n  slice_s: 1e300\n", "c.yaml:2: output.slice_s: out of range");
  CHECK_ERROR("load:\n  stages:\n    - {duration_s: 1e300}\n",
              "c.yaml:3: load.stages[0].duration_s: out of range");
  CHECK_ERROR("load:\n  stages:\n    - {duration_s: 1, settle_s: 1e300}\n",
              "load.stages[0].settle_s: out of range");
  CHECK_ERROR("load:\n  abort_on: {window_s: 1e300}\n", "load.abort_on.window_s: out of range");
  CHECK_ERROR("workers:\n  ready_timeout_s: 1e300\n", "workers.ready_timeout_s: out of range");
  CHECK_ERROR("session_routing:\n  timeout_s: 1e12\n", "session_routing.timeout_s: out of range");
}

TEST_CASE("rates, timeouts and counts at their edges") {
  CHECK_ERROR("load:\n  mode: rate\n  rate: 1e-300\n", "c.yaml:3: load.rate: out of range",
              "[0.001, 1000000] conversations per second");
  CHECK_ERROR("load:\n  sweep: {rate: [5, 1e9], duration_s: 1}\n",
              "load.sweep.rate[1]: out of range");
  CHECK_ERROR("target:\n  request_timeout_s: 0.0004\n",
              "c.yaml:2: target.request_timeout_s: out of range");
  CHECK_ERROR("telemetry:\n  timeout_s: 0.0001\n", "telemetry.timeout_s: out of range");
  CHECK_ERROR("load:\n  requests: 10000000000\n", "load.requests: out of range");
  CHECK_ERROR("dataset:\n  input_tokens: 1e12\n", "dataset.input_tokens.mean: out of range");
  CHECK_ERROR("load:\n  burstiness: 1e-9\n", "load.burstiness: out of range");
  CHECK_ERROR("slo:\n  time_to_first_token: 1e300\n", "slo.time_to_first_token: out of range");
}

TEST_CASE("mock.speedup has a range (1e-300 was exit 3 with a misleading message)") {
  CHECK_ERROR("mock:\n  speedup: 1e-300\n", "c.yaml:2: mock.speedup: out of range",
              "[0.001, 1000000]");
  CHECK_ERROR("mock:\n  speedup: 1e9\n", "mock.speedup: out of range");
  CHECK(convoy::parse_config("mock:\n  speedup: 50\n", "c.yaml").mock.speedup == 50);
}

TEST_CASE("a --set value is checked the same way") {
  const std::string e = convoy::test::error_of("name: a\n", {"load.concurrency=1000000000"});
  CHECK_MESSAGE(convoy::test::contains(e, "--set load.concurrency=1000000000: out of range"), e);
}

TEST_CASE("the scheduler never turns an absurd number into a flood or a spin") {
  using convoy::controller::ArrivalProcess;
  using convoy::controller::Scheduler;
  SUBCASE("a rate of 1e-300: the next arrival is far away, not in the past") {
    convoy::LoadConfig load;
    load.mode = convoy::LoadMode::kRate;
    load.rate = 1e-300;
    load.arrival = convoy::Arrival::kConstant;
    ArrivalProcess arrivals(load, 1);
    CHECK(arrivals.next_gap_ns() == 0);
    CHECK(arrivals.next_gap_ns() == convoy::kMaxDurationNs);
    Scheduler s(load, convoy::LoadMode::kRate, 1, std::nullopt, 0);
    CHECK(s.due(3'000'000'000, 0).size() == 1);  // the first only, in 3 s
  }
  SUBCASE("100,000 slots start and shrink in milliseconds, not seconds") {
    const auto t0 = std::chrono::steady_clock::now();
    convoy::LoadConfig load;
    load.concurrency = convoy::limits::kMaxConcurrency;
    Scheduler s(load, convoy::LoadMode::kConcurrency, 1, std::nullopt, 0);
    CHECK(s.due(0, 0).size() == static_cast<size_t>(load.concurrency));
    for (int i = 0; i < 100'000; ++i) s.on_end(i);
    convoy::StageConfig one;
    one.concurrency = convoy::LoadLevel{1, 1, convoy::RampShape::kLinear, false};
    one.duration_s = 1;
    s.set_stage(one, 1, 200'000);  // 100,000 free slots down to 1
    CHECK(s.limit() == 1);
    // Linear searches took about 10 s here (a min_element per start, a max_element per slot
    // dropped); the heap takes milliseconds, so 4 s leaves room for a loaded machine.
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
  }
}
