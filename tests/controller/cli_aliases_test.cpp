#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/cli/cli_aliases.hpp"

using namespace convoy::controller;
using Overrides = std::vector<std::string>;

TEST_CASE("AIPerf routing flags translate into session_routing overrides") {
  SUBCASE("no flags: nothing") {
    auto r = translate_aliases(false, false, std::nullopt);
    CHECK_FALSE(r.error);
    CHECK(r.overrides.empty());
  }
  SUBCASE("conv-aware routing alone is bind") {
    auto r = translate_aliases(true, false, std::nullopt);
    CHECK_FALSE(r.error);
    CHECK(r.overrides == Overrides{"session_routing.mode=bind"});
  }
  SUBCASE("with the legacy flag it is legacy") {
    auto r = translate_aliases(true, true, std::nullopt);
    CHECK_FALSE(r.error);
    CHECK(r.overrides == Overrides{"session_routing.mode=legacy"});
  }
  SUBCASE("the timeout becomes timeout_s") {
    auto r = translate_aliases(true, false, std::string("120"));
    CHECK_FALSE(r.error);
    CHECK(r.overrides == Overrides{"session_routing.mode=bind", "session_routing.timeout_s=120"});
    r = translate_aliases(false, false, std::string("7"));
    CHECK(r.overrides == Overrides{"session_routing.timeout_s=7"});
  }
}

TEST_CASE("the legacy flag without conv-aware routing is an error naming the flag to add") {
  auto r = translate_aliases(false, true, std::string("60"));
  REQUIRE(r.error);
  CHECK(r.error->find("add --use-dynamo-conv-aware-routing") != std::string::npos);
  CHECK(r.error->find("--use-legacy-dynamo-session-control") != std::string::npos);
  CHECK(r.overrides.empty());
}

TEST_CASE("the timeout must be a whole positive number") {
  for (const char* bad :
       {"0", "-5", "1.5", "abc", "", " 30", "30s", "+30", "99999999999999999999999"}) {
    CAPTURE(bad);
    auto r = translate_aliases(true, false, std::string(bad));
    REQUIRE(r.error);
    CHECK(r.error->find("--dynamo-session-timeout-seconds") != std::string::npos);
    CHECK(r.overrides.empty());
  }
  auto r = translate_aliases(true, false, std::string("9223372036854775807"));
  CHECK_FALSE(r.error);
}

TEST_CASE("help text says the legacy flag only selects the wire format") {
  const std::string legacy = kHelpLegacy;
  CHECK(legacy.find("wire format") != std::string::npos);
  CHECK(legacy.find(kFlagConvAware) != std::string::npos);
  CHECK(std::string(kHelpConvAware).find("bind") != std::string::npos);
  CHECK(std::string(kHelpTimeout).find("whole seconds") != std::string::npos);
}
