// CapacitySearch: low, then high, then bisection, with every step judged by a fake server whose
// knee is known; and the whole loop with StagePlan on a hand-advanced clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "controller/config/load_profile.hpp"
#include "controller/run/capacity_search.hpp"
#include "controller/run/stage_plan.hpp"
#include "test_time.hpp"

using convoy::LoadConfig;
using convoy::LoadMode;
using convoy::SearchConfig;
using convoy::StageConfig;
using convoy::controller::CapacitySearch;
using convoy::controller::StageCounters;
using convoy::controller::StageEventKind;
using convoy::controller::StagePlan;

namespace {

SearchConfig search(LoadMode vary, double low, double high, double precision) {
  SearchConfig c;
  c.vary = vary;
  c.low = low;
  c.high = high;
  c.precision = precision;
  c.step_duration_s = 10;
  return c;
}

// Runs the search against "meets the SLO iff value <= knee"; returns the values tried.
std::vector<double> drive(CapacitySearch& s, const std::function<bool(double)>& meets) {
  std::vector<double> tried;
  for (int i = 0; i < 100; ++i) {
    auto v = s.next();
    if (!v) break;
    tried.push_back(*v);
    s.record(*v, meets(*v));
  }
  return tried;
}

}  // namespace

TEST_CASE("capacity search: low, then high, then midpoints until the bracket is within precision") {
  CapacitySearch s(search(LoadMode::kRate, 1, 100, 0.05));
  const auto tried = drive(s, [](double v) { return v <= 37.3; });
  REQUIRE(tried.size() >= 3);
  CHECK(tried[0] == 1);
  CHECK(tried[1] == 100);
  CHECK(tried[2] == doctest::Approx(50.5));
  REQUIRE(s.max_meeting_slo());
  REQUIRE(s.min_failing());
  CHECK(*s.max_meeting_slo() <= 37.3);
  CHECK(*s.min_failing() > 37.3);
  CHECK((*s.min_failing() - *s.max_meeting_slo()) / *s.min_failing() <= 0.05);
  CHECK(tried.size() < 12);  // bisection: log2 steps, not a scan
}

TEST_CASE("capacity search: concurrency values are whole slot counts") {
  CapacitySearch s(search(LoadMode::kConcurrency, 1, 512, 0.01));
  const auto tried = drive(s, [](double v) { return v <= 40; });
  for (double v : tried) CHECK(v == static_cast<double>(static_cast<int64_t>(v)));
  CHECK(s.max_meeting_slo() == 40);
  CHECK(s.min_failing() == 41);  // no whole number left in between
  std::vector<double> sorted = tried;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // none twice
}

TEST_CASE("capacity search: when low misses or high meets, the search stops there") {
  SUBCASE("low misses: nothing meets") {
    CapacitySearch s(search(LoadMode::kConcurrency, 4, 64, 0.05));
    CHECK(drive(s, [](double) { return false; }) == std::vector<double>{4});
    CHECK_FALSE(s.max_meeting_slo().has_value());
    CHECK(s.min_failing() == 4);
  }
  SUBCASE("high meets: at least high") {
    CapacitySearch s(search(LoadMode::kRate, 0.5, 20, 0.05));
    CHECK(drive(s, [](double) { return true; }) == std::vector<double>{0.5, 20});
    CHECK(s.max_meeting_slo() == 20);
    CHECK_FALSE(s.min_failing().has_value());
  }
}

TEST_CASE("capacity search: steps run as stages, each judged after its in-flight work ended") {
  // The Run's loop in miniature: a hand-advanced clock, a StagePlan whose next stage is the
  // search's next step (search_step), judged when the previous one settled.
  LoadConfig load;
  load.search = search(LoadMode::kConcurrency, 1, 64, 0.05);
  load.search->settle_s = 1;
  CapacitySearch s(*load.search);
  const double knee = 12;
  std::vector<std::pair<double, bool>> judged;
  int64_t in_flight = 0;
  auto next = [&](int finished) -> std::optional<StageConfig> {
    if (finished >= 0) {
      REQUIRE(in_flight == 0);  // judged only once the step's work ended
      const double v = *s.next();
      judged.push_back({v, v <= knee});
      s.record(v, v <= knee);
    }
    auto v = s.next();
    if (!v) return std::nullopt;
    return convoy::search_step(load, *v, finished + 1);
  };
  const int64_t t0 = 1000 * kS;
  StagePlan plan({}, next, /*wait_idle_ns=*/30 * kS);
  plan.start(t0);
  int64_t now = t0;
  for (int i = 0; i < 10'000 && !plan.done(); ++i, now += kS / 10) {
    // Work is in flight while a stage runs and for 2 s after it ended.
    const auto& w = plan.windows().back();
    in_flight = (!w.end_ns || now < *w.end_ns + 2 * kS) ? 4 : 0;
    plan.advance(now, StageCounters{4, 4, w.start_ns, static_cast<size_t>(in_flight)});
  }
  REQUIRE(plan.done());
  CHECK(s.max_meeting_slo() == 12);
  CHECK(s.min_failing() == 13);
  CHECK(judged.size() == plan.windows().size());
  for (size_t i = 0; i < judged.size(); ++i) {
    CHECK(plan.windows()[i].config.value == judged[i].first);
    CHECK(plan.windows()[i].config.name ==
          convoy::stage_value_name(LoadMode::kConcurrency, judged[i].first));
    // Each step: its 10 s, then 2 s until idle (less than the 30 s bound).
    CHECK(*plan.windows()[i].settle_end_ns - *plan.windows()[i].end_ns <= 2 * kS + kS / 10);
  }
}
