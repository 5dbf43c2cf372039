#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/run/target_probe.hpp"
#include "test_util.hpp"

namespace convoy::controller {

TEST_CASE("every target.urls entry is probed and each unreachable one is named") {
  const test::LoopbackListener up_a;
  const test::LoopbackListener up_b;
  const test::RefusingPort down;
  SUBCASE("all up: nothing to report") {
    CHECK(unreachable_urls({up_a.url(), up_b.url()}, 2000).empty());
  }
  SUBCASE("one down among two up: that one, by position and url") {
    const auto failures = unreachable_urls({up_a.url(), down.url(), up_b.url()}, 2000);
    REQUIRE(failures.size() == 1);
    CHECK(failures[0].starts_with("target.urls[1] " + down.url() +
                                  ": 127.0.0.1:" + std::to_string(down.port()) + ": "));
    CHECK(failures[0].find("refused") != std::string::npos);
  }
  SUBCASE("not an http(s) url") {
    const auto failures = unreachable_urls({"ftp://127.0.0.1:21", up_a.url()}, 2000);
    REQUIRE(failures.size() == 1);
    CHECK(failures[0] == "target.urls[0] ftp://127.0.0.1:21: not an http(s) url");
  }
  SUBCASE("every dead one is named, in order") {
    const test::RefusingPort down_too;
    const auto failures = unreachable_urls({down.url(), up_a.url(), down_too.url()}, 2000);
    REQUIRE(failures.size() == 2);
    CHECK(failures[0].starts_with("target.urls[0] "));
    CHECK(failures[1].starts_with("target.urls[2] "));
  }
}

}  // namespace convoy::controller
