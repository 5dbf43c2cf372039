#include <doctest/doctest.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "controller/cli/cli.hpp"
#include "controller/cli/cli_aliases.hpp"
#include "test_util.hpp"

using namespace convoy::controller;
using Overrides = std::vector<std::string>;

TEST_CASE("AIPerf routing flags translate into session_routing overrides") {
  SUBCASE("no flags: nothing") {
    auto r = translate_aliases(false, false, std::nullopt);
    CHECK_FALSE(r.error);
    CHECK(r.overrides.empty());
  }
  SUBCASE("conv-aware routing alone is auto (learned from the target)") {
    auto r = translate_aliases(true, false, std::nullopt);
    CHECK_FALSE(r.error);
    CHECK(r.overrides == Overrides{"session_routing.mode=auto"});
  }
  SUBCASE("with the legacy flag it is legacy") {
    auto r = translate_aliases(true, true, std::nullopt);
    CHECK_FALSE(r.error);
    CHECK(r.overrides == Overrides{"session_routing.mode=legacy"});
  }
  SUBCASE("the timeout becomes timeout_s") {
    auto r = translate_aliases(true, false, std::string("120"));
    CHECK_FALSE(r.error);
    CHECK(r.overrides == Overrides{"session_routing.mode=auto", "session_routing.timeout_s=120"});
    r = translate_aliases(false, false, std::string("7"));
    CHECK(r.overrides == Overrides{"session_routing.timeout_s=7"});
  }
}

TEST_CASE("the legacy flag alone forces legacy") {
  auto r = translate_aliases(false, true, std::string("60"));
  CHECK_FALSE(r.error);
  CHECK(r.overrides == Overrides{"session_routing.mode=legacy", "session_routing.timeout_s=60"});
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

TEST_CASE("help text says the flag learns the contract and the legacy flag forces legacy") {
  const std::string legacy = kHelpLegacy;
  CHECK(legacy.find("Force the legacy wire format") != std::string::npos);
  CHECK(legacy.find("session_routing.mode=legacy") != std::string::npos);
  CHECK(std::string(kHelpConvAware).find("session_routing.mode=auto") != std::string::npos);
  CHECK(std::string(kHelpTimeout).find("whole seconds") != std::string::npos);
}

namespace {

// `convoy validate CONFIG ARGS...`: its exit code and what it printed on stdout.
std::pair<int, std::string> validate_with(const std::vector<std::string>& args) {
  convoy::test::TempDir dir("convoy-cli-alias-");
  const auto config = dir.path() / "run.yaml";
  std::ofstream(config) << "name: alias\ndataset: {conversations: 2}\n";
  std::vector<std::string> argv_text = {"convoy", "validate", config.string()};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  const int rc = cli_main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old);
  // The first line names the (unique) config path: keep the resolved config only.
  const std::string text = out.str();
  const size_t body = text.find('\n');
  return {rc, body == std::string::npos ? text : text.substr(body + 1)};
}

}  // namespace

TEST_CASE("--use-dynamo-session-control is AIPerf's other name for conv-aware routing") {
  CHECK(std::string(kFlagConvAwareNames).find(kFlagConvAware) == 0);
  CHECK(std::string(kFlagConvAwareNames).find(kFlagSessionControl) != std::string::npos);
  SUBCASE("alone it is auto, like the original spelling") {
    const auto [rc, out] = validate_with({kFlagSessionControl});
    CHECK(rc == 0);
    CHECK(out.find("  mode: auto\n") != std::string::npos);
    const auto [rc_orig, out_orig] = validate_with({kFlagConvAware});
    CHECK(rc_orig == 0);
    CHECK(out_orig == out);
  }
  SUBCASE("with the legacy flag it is legacy") {
    const auto [rc, out] = validate_with({kFlagSessionControl, kFlagLegacy});
    CHECK(rc == 0);
    CHECK(out.find("  mode: legacy\n") != std::string::npos);
  }
  SUBCASE("the legacy flag alone is legacy too") {
    const auto [rc, out] = validate_with({kFlagLegacy});
    CHECK(rc == 0);
    CHECK(out.find("  mode: legacy\n") != std::string::npos);
  }
  SUBCASE("without it nothing changes") {
    const auto [rc, out] = validate_with({});
    CHECK(rc == 0);
    CHECK(out.find("  mode: off\n") != std::string::npos);
  }
}
