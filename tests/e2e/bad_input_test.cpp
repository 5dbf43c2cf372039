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

TEST_CASE("convoy refuses invalid UTF-8, recursive aliases, numbers out of range and bad URLs") {
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
      // Before the load-time checks a recursive alias was SIGSEGV (exit 139); a second document was
      // ignored; these numbers and URLs were accepted and then hung, flooded or failed at start
      // (exit 3).
      {"x: &r [*r]\n", ":1: x[0]: recursive alias"},
      {"name: a\n---\nname: b\n", ":2: a second YAML document"},
      {"load:\n  sweep: {concurrency: [1000000000], duration_s: 1}\n",
       ":2: load.sweep.concurrency[0]: out of range"},
      {"telemetry:\n  interval_s: 1e10\n", ":2: telemetry.interval_s: out of range"},
      {"mock:\n  speedup: 1e-300\n", ":2: mock.speedup: out of range"},
      {"target:\n  url: \"http://127.0.0.1:1/v1 x\"\n", ":2: target.url: the URL holds a space"},
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
