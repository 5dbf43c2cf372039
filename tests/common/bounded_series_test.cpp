#include "common/bounded_series.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

namespace {

using convoy::BoundedSeries;

template <class T, class M>
std::vector<T> values_of(const BoundedSeries<T, M>& s) {
  return {s.points().begin(), s.points().end()};
}

struct Pair {
  int64_t count = 0;
  int64_t largest = 0;
  void merge(const Pair& o) {
    count += o.count;
    largest = largest < o.largest ? o.largest : largest;
  }
};

}  // namespace

TEST_CASE("bounded series: points by offset grow on demand within the capacity") {
  BoundedSeries<int64_t> s(4, 10);
  s.at(25) += 1;
  CHECK(s.size() == 3);
  CHECK(values_of(s) == std::vector<int64_t>{0, 0, 1});
  s.at(-5) += 2;  // before the start counts in the first point
  s.at(39) += 3;
  CHECK(values_of(s) == std::vector<int64_t>{2, 0, 1, 3});
  CHECK(s.width() == 10);
  CHECK(s.start_of(3) == 30);
  CHECK(s.fits(39));
  CHECK_FALSE(s.fits(40));
}

TEST_CASE("bounded series: past the capacity the width doubles and neighbours merge in pairs") {
  SUBCASE("sum keeps every count") {
    BoundedSeries<int64_t> s(4, 1);
    for (int64_t t = 0; t < 4; ++t) s.at(t) += t + 1;  // 1 2 3 4
    s.at(4) += 5;
    CHECK(s.width() == 2);
    CHECK(values_of(s) == std::vector<int64_t>{3, 7, 5});
    s.at(17) += 1;  // index 17 / 2 = 8, then 17 / 4 = 4, then 17 / 8 = 2: two doublings
    CHECK(s.width() == 8);
    CHECK(values_of(s) == std::vector<int64_t>{15, 0, 1});
  }
  SUBCASE("a lone last point stays as it is") {
    BoundedSeries<int64_t> s(8, 1);
    for (int64_t t = 0; t < 5; ++t) s.at(t) = 10 + t;
    s.coarsen();
    CHECK(values_of(s) == std::vector<int64_t>{21, 25, 14});
  }
  SUBCASE("max, mean, keep-first and a struct's own merge") {
    BoundedSeries<int64_t, convoy::MergeMax> largest(2, 1);
    BoundedSeries<double, convoy::MergeMean> mean(2, 1);
    BoundedSeries<int64_t, convoy::MergeKeepFirst> first(2, 1);
    BoundedSeries<Pair, convoy::MergeMember> pairs(2, 1);
    const int64_t values[] = {4, 9, 2};
    for (int64_t t = 0; t < 3; ++t) {
      largest.at(t) = values[t];
      mean.at(t) = static_cast<double>(values[t]);
      first.at(t) = values[t];
      Pair& p = pairs.at(t);
      ++p.count;
      p.largest = values[t];
    }
    CHECK(values_of(largest) == std::vector<int64_t>{9, 2});
    CHECK(values_of(mean) == std::vector<double>{6.5, 2});
    CHECK(values_of(first) == std::vector<int64_t>{4, 2});
    REQUIRE(pairs.size() == 2);
    CHECK(pairs[0].count == 2);
    CHECK(pairs[0].largest == 9);
    CHECK(pairs[1].count == 1);
  }
}

TEST_CASE("bounded series: filled point by point, it coarsens when the caller finds it full") {
  BoundedSeries<int64_t, convoy::MergeKeepFirst> s(4, 1);
  for (int64_t v = 0; v < 4; ++v) s.push_back(v);
  CHECK(s.full());
  s.coarsen();
  CHECK(s.width() == 2);  // each point now stands for two samples
  CHECK(values_of(s) == std::vector<int64_t>{0, 2});
  CHECK_FALSE(s.full());
}

TEST_CASE("bounded series: memory stays fixed however long the run") {
  BoundedSeries<int64_t> s(64, 1);
  s.at(63);
  const size_t bytes = s.memory_bytes();
  CHECK(bytes == 64 * sizeof(int64_t));
  int64_t total = 0;
  for (int64_t t = 0; t < 100'000; t += 7) {
    s.at(t) += 1;
    ++total;
  }
  CHECK(s.size() <= 64);
  CHECK(s.memory_bytes() == bytes);
  int64_t counted = 0;
  for (int64_t n : s.points()) counted += n;
  CHECK(counted == total);
  CHECK(s.start_of(s.size() - 1) <= 100'000);
  CHECK(s.start_of(s.size() - 1) + s.width() > 99'996);
}
