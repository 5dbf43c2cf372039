#include "common/bucket_quantile.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

using convoy::bucket_quantile;
using Buckets = std::vector<std::pair<double, double>>;

TEST_CASE("bucket quantile: Prometheus histogram_quantile's interpolation") {
  SUBCASE("no observations") {
    CHECK_FALSE(bucket_quantile(Buckets{}, 0.5).has_value());
    CHECK_FALSE(bucket_quantile(Buckets{{1, 0}, {INFINITY, 0}}, 0.5).has_value());
    CHECK_FALSE(bucket_quantile(Buckets{{INFINITY, 10}}, 0.5).has_value());
  }
  SUBCASE("linear inside the bucket, from 0 below the first positive bound") {
    CHECK(*bucket_quantile(Buckets{{1, 10}, {INFINITY, 10}}, 0.5) == doctest::Approx(0.5));
    CHECK(*bucket_quantile(Buckets{{1, 0}, {2, 10}, {INFINITY, 10}}, 0.25) ==
          doctest::Approx(1.25));
    CHECK(*bucket_quantile(Buckets{{0.1, 50}, {0.5, 90}, {INFINITY, 100}}, 0.9) ==
          doctest::Approx(0.5));
  }
  SUBCASE("the highest finite bound when the rank falls in +Inf") {
    CHECK(*bucket_quantile(Buckets{{1, 5}, {INFINITY, 10}}, 0.9) == 1);
  }
  SUBCASE("a first bound at or below 0 is its own value") {
    CHECK(*bucket_quantile(Buckets{{-1, 4}, {1, 8}, {INFINITY, 8}}, 0.25) == -1);
  }
  SUBCASE("an empty bucket where the rank lands gives its bound") {
    CHECK(*bucket_quantile(Buckets{{1, 0}, {2, 0}, {INFINITY, 0.0001}}, 0) == 1);
  }
}
