// The mock's prefix-block hashes, pinned: a changed hash would change which requests hit the
// simulated KV cache, and with it every cache-hit figure a run reports against the mock.
#include <doctest/doctest.h>

#include "mock/tokens.hpp"

namespace convoy::mock {
namespace {

TEST_CASE("tokens: block hashes are pinned") {
  const auto hashes = block_hashes("abcdefgh", 1);  // two blocks of one 4-byte token
  REQUIRE(hashes.size() == 2);
  CHECK(hashes[0] == 0xc39878613b5440feULL);
  CHECK(hashes[1] == 0xf7116533c96bd28dULL);
}

}  // namespace
}  // namespace convoy::mock
