// The hash primitives of common/hash.hpp, pinned to reference values: sharding, cancellation
// picks, dataset draws and the mock's prefix blocks are built on them and must never change.
#include "common/hash.hpp"

#include <doctest/doctest.h>

#include <cstdint>

namespace {

using convoy::fnv1a64;
using convoy::kFnv1a64Basis;
using convoy::splitmix64;
using convoy::splitmix64_finalize;
using convoy::splitmix64_next;

TEST_CASE("splitmix64_next gives the reference sequence from state 0") {
  uint64_t state = 0;
  CHECK(splitmix64_next(state) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64_next(state) == 0x6e789e6aa1b965f4ULL);
  CHECK(splitmix64_next(state) == 0x06c45d188009454fULL);
  CHECK(state == 3 * convoy::kSplitmix64Gamma);
}

TEST_CASE("splitmix64 is one generator step without state") {
  CHECK(splitmix64(0) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64(1) == 0x910a2dec89025cc1ULL);
  CHECK(splitmix64(42) == 0xbdd732262feb6e95ULL);
  for (uint64_t x : {uint64_t{0}, uint64_t{7}, ~uint64_t{0}}) {
    uint64_t state = x;
    CHECK(splitmix64(x) == splitmix64_next(state));
  }
}

TEST_CASE("splitmix64_finalize is the finalizer alone and maps 0 to 0") {
  CHECK(splitmix64_finalize(0) == 0);
  CHECK(splitmix64_finalize(1) == 0x5692161d100b05e5ULL);
  CHECK(splitmix64_finalize(42) == 0xa759ea27d4727622ULL);
  CHECK(splitmix64_finalize(1) != splitmix64(1));
}

TEST_CASE("fnv1a64 matches the published test vectors") {
  CHECK(fnv1a64("") == kFnv1a64Basis);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ULL);
  SUBCASE("bytes above 0x7f hash as unsigned") {
    CHECK(fnv1a64("\xff") == ((kFnv1a64Basis ^ 0xffULL) * 0x100000001b3ULL));
  }
  SUBCASE("a chained basis continues from the given value") {
    CHECK(fnv1a64("bar", fnv1a64("foo")) == fnv1a64("foobar"));
  }
}

TEST_CASE("the hashes are usable at compile time") {
  static_assert(splitmix64(0) == 0xe220a8397b1dcdafULL);
  static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(true);
}

}  // namespace
