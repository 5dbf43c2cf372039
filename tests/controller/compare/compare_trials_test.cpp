// `convoy compare` of load.trials folders: the combined summary.json's intervals decide noise.
// Overlapping trial intervals are "within noise" even past the 5% rule; apart ones count even
// under it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/compare/comparison.hpp"
#include "controller/compare/noise.hpp"
#include "controller/compare/run_loader.hpp"
#include "controller/report/trials_summary.hpp"

using namespace convoy::controller::compare;
using convoy::controller::TrialResult;
using convoy::controller::TrialsSummary;

namespace {

// The combined summary.json of trials whose TTFT p99 were `p99_ms`, as the run writes it.
std::string trials_summary_of(const std::vector<double>& p99_ms) {
  TrialsSummary s;
  s.planned = static_cast<int64_t>(p99_ms.size());
  for (size_t i = 0; i < p99_ms.size(); ++i) {
    TrialResult t;
    t.index = static_cast<int>(i + 1);
    t.included = true;
    t.values["time_to_first_token"]["p99"] = p99_ms[i];
    t.units["time_to_first_token"] = "ms";
    t.values["request_throughput"]["avg"] = 50;
    t.units["request_throughput"] = "requests/sec";
    s.trials.push_back(t);
  }
  return convoy::controller::trials_summary_json(s);
}

// The TTFT p99 row of base vs other.
Row ttft_p99_row(const std::vector<double>& base, const std::vector<double>& other) {
  std::vector<Column> columns = {column_from_summary("base", trials_summary_of(base)),
                                 column_from_summary("other", trials_summary_of(other))};
  for (const Row& r : headline_rows(columns)) {
    if (r.tag == "time_to_first_token" && r.stat == "p99") return r;
  }
  FAIL("no TTFT p99 row");
  return {};
}

}  // namespace

TEST_CASE("compare reads a trials summary's intervals into its column") {
  const Column c = column_from_summary("t", trials_summary_of({100, 104, 96}));
  REQUIRE(c.trial_intervals.count("time_to_first_token"));
  const ValueInterval in = c.trial_intervals.at("time_to_first_token").at("p99");
  CHECK(in.low < 100);
  CHECK(in.high > 100);
  CHECK(c.value("time_to_first_token", "p99") == doctest::Approx(100));
}

TEST_CASE("compare judges load.trials columns by their trial intervals") {
  SUBCASE("overlapping intervals are within noise though the means differ by 8%") {
    const Row r = ttft_p99_row({100, 104, 96}, {108, 118, 98});
    REQUIRE(r.noise[1].has_value());
    CHECK(r.noise[1]->method == NoiseMethod::kTrialInterval);
    CHECK_FALSE(r.noise[1]->significant);
    CHECK(judgement(r, 1) == "within noise");
    REQUIRE(r.intervals[1].has_value());
    CHECK(r.intervals[1]->low < 108);
  }
  SUBCASE("apart intervals count though the means differ by 3%") {
    const Row r = ttft_p99_row({100, 100.2, 99.8}, {103, 103.2, 102.8});
    REQUIRE(r.noise[1].has_value());
    CHECK(r.noise[1]->method == NoiseMethod::kTrialInterval);
    CHECK(r.noise[1]->significant);
    CHECK(judgement(r, 1) == "worse");
  }
  SUBCASE("without trials on both sides the relative rule stays") {
    std::vector<Column> columns = {
        column_from_summary("base", trials_summary_of({100, 104, 96})),
        column_from_summary("single", R"({"convoy_version": "x", "time_to_first_token":
            {"unit": "ms", "p99": 108}})")};
    for (const Row& r : headline_rows(columns)) {
      if (r.tag != "time_to_first_token") continue;
      REQUIRE(r.noise[1].has_value());
      CHECK(r.noise[1]->method == NoiseMethod::kMinRelative);
    }
  }
  CHECK(std::string(to_string(NoiseMethod::kTrialInterval)) == "trial_interval");
}
