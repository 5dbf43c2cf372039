// End to end, the real convoy binary: config values that convoy cannot honour are refused at
// load with file:line:key and exit code 2, before anything starts or is sent.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

using namespace convoy::test;

TEST_CASE("convoy refuses invalid UTF-8, workers.local over its bound and max_response_bytes 0") {
  TempDir dir("convoy-bad-input-");
  struct Case {
    std::string yaml;
    std::string says;
  };
  const Case cases[] = {
      {"name: \"run-\xff\"\n", ":1: name: value is not valid UTF-8"},
      {"target:\n  url: mock\n  model: \"m\xc3\"\n", ":3: target.model: value is not valid UTF-8"},
      {"workers:\n  local: 100000\n", ":2: workers.local: at most 256"},
      {"target:\n  max_response_bytes: 0\n", ":2: target.max_response_bytes:"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string path = (dir.path() / ("c" + std::to_string(i++) + ".yaml")).string();
    std::ofstream(path) << c.yaml;
    for (const char* command : {"validate", "run"}) {
      INFO(command << " " << c.says);
      std::vector<std::string> argv = {bin("controller/convoy"), command, path};
      if (std::string(command) == "run")
        argv.insert(argv.end(), {"-o", (dir.path() / "out").string(), "--quiet"});
      Subprocess p(argv);
      const auto rc = p.wait(60);
      INFO(p.output());
      REQUIRE(rc.has_value());
      CHECK(*rc == convoy::kExitBadInput);
      CHECK(p.output().find(path + c.says) != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(dir.path() / "out"));  // nothing ran
    }
  }
}
