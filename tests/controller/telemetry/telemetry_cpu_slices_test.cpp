// CpuSlices (controller/telemetry/cpu_slices.hpp): the scraper thread yields its core between
// slices of a scrape's work. Driven by a hand-advanced clock and a counting yield.
#include "controller/telemetry/cpu_slices.hpp"

#include <doctest/doctest.h>

#include <cstdint>

#include "controller/telemetry/series_store.hpp"
#include "series_store_test_util.hpp"

using convoy::telemetry::CpuSlices;

namespace {

struct Fake {
  int64_t now_ns = 1'000'000;
  int yields = 0;
  CpuSlices slices{100'000, [this] { return now_ns; }, [this] { ++yields; }};
};

}  // namespace

TEST_CASE("cpu slices: a yield once a slice of work is used up, none before") {
  Fake f;
  f.slices.start();
  SUBCASE("work faster than a slice never yields") {
    for (int i = 0; i < 10'000; ++i) f.slices.point();  // the clock does not move
    CHECK(f.yields == 0);
  }
  SUBCASE("the clock is looked at every kCheckEvery points") {
    f.now_ns += 100'000;  // the slice is used up
    for (unsigned i = 0; i + 1 < CpuSlices::kCheckEvery; ++i) f.slices.point();
    CHECK(f.yields == 0);
    f.slices.point();
    CHECK(f.yields == 1);
    CHECK(f.slices.yields() == 1);
  }
  SUBCASE("each slice starts after its yield: 1 ms of work in 1 us steps yields 7 times") {
    for (int i = 0; i < 1000; ++i) {
      f.now_ns += 1'000;
      f.slices.point();
    }
    // Checked every 64 us: a yield at the first check past each 100 us (128 us apart).
    CHECK(f.yields == 7);
  }
  SUBCASE("start() begins a new slice: a burst after a sleep does not yield at once") {
    f.now_ns += 5'000'000'000;  // the thread slept between scrapes
    f.slices.start();
    for (unsigned i = 0; i < CpuSlices::kCheckEvery; ++i) f.slices.point();
    CHECK(f.yields == 0);
  }
}

TEST_CASE("cpu slices: the series store tells them of every sample it folds in") {
  convoy::telemetry::SeriesStore store({{"server", "http://127.0.0.1:1/metrics"}}, 10'000);
  std::string text = "# TYPE g gauge\n";
  for (int i = 0; i < 640; ++i) text += "g{i=\"" + std::to_string(i) + "\"} 1\n";
  const auto samples = convoy::test::scrape_of(text);
  REQUIRE(samples.size() == 640);
  // A clock that moves a whole slice at every look: every check finds the slice used up.
  int64_t now_ns = 0;
  int yields = 0;
  CpuSlices slices(
      100'000, [&] { return now_ns += 100'000; }, [&] { ++yields; });
  slices.start();
  store.add_scrape(0, 0, samples, 0, "", nullptr, &slices);
  CHECK(yields == 640 / static_cast<int>(CpuSlices::kCheckEvery));
}
