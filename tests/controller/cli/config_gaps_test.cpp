// Small gaps in validation, each refused at load with FILE:LINE: key (exit 2)
// instead of failing every request, failing at start (exit 3) or being refused for the wrong
// reason.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "controller/cli/keygen.hpp"
#include "controller/config_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

TEST_CASE("URLs with spaces or control characters are refused, naming the key") {
  CHECK_ERROR("target:\n  url: \"http://host:8000/v1 x\"\n",
              "c.yaml:2: target.url: the URL holds a space at offset 19");
  CHECK_ERROR("target:\n  urls: [\"http://a:1\", \"http://b:1/\\tx\"]\n",
              "c.yaml:2: target.urls[1]: the URL holds a control character (0x09, a tab)");
  CHECK_ERROR("target:\n  url: \"http://host:8000/\\nx\"\n",
              "target.url: the URL holds a control character (0x0a, a line break) at offset 17");
  CHECK_ERROR("telemetry:\n  endpoints:\n    - {name: gpu, url: \"http://node 1:9400/metrics\"}\n",
              "c.yaml:3: telemetry.endpoints[0].url: the URL holds a space at offset 11");
  CHECK(convoy::parse_config("target:\n  url: \"http://h:1/a%20b\"\n", "c.yaml").target.url ==
        "http://h:1/a%20b");
}

TEST_CASE("workers.curve_keys must hold the key files, named when missing") {
  const convoy::test::TempDir dir("convoy-curve-keys-");
  const fs::path keys = dir.path() / "keys";
  fs::create_directories(keys);
  const std::string yaml = "workers:\n  curve_keys: " + keys.string() + "\n";
  SUBCASE("an empty folder: exit 2 naming controller.key (was exit 3 at start)") {
    const std::string says = "c.yaml:2: workers.curve_keys: key file '" +
                             (keys / "controller.key").string() +
                             "' does not exist (write the folder with `convoy keygen";
    CHECK_ERROR(yaml, says.c_str());
  }
  REQUIRE(convoy::controller::write_curve_keys(keys.string(), 1) == 0);
  SUBCASE("a full folder loads") {
    CHECK(convoy::parse_config(yaml, "c.yaml").workers.curve_keys.has_value());
  }
  SUBCASE("local workers need worker-0.key") {
    fs::remove(keys / "worker-0.key");
    const std::string says = "key file '" + (keys / "worker-0.key").string() + "' does not exist";
    CHECK_ERROR(yaml, says.c_str());
    // Remote workers only: the controller needs no worker key.
    CHECK(convoy::parse_config(yaml + "  local: 0\n  expect: 1\n", "c.yaml")
              .workers.curve_keys.has_value());
  }
  SUBCASE("a controller.key that does not parse is named with its line") {
    std::ofstream(keys / "controller.key") << "garbage\n";
    const std::string says = (keys / "controller.key").string() + ":1: expected 'public = KEY'";
    CHECK_ERROR(yaml, says.c_str());
  }
}

TEST_CASE("names with control characters, and '..', are refused for the right reason") {
  CHECK_ERROR("load:\n  stages:\n    - {name: \"a\\nb\", duration_s: 1}\n",
              "c.yaml:3: load.stages[0].name: holds a control character (0x0a, a line break)");
  CHECK_ERROR("name: \"run\\r1\"\n", "c.yaml:1: name: holds a control character (0x0d");
  CHECK_ERROR("name: '..'\n", "c.yaml:1: name: '..' names an existing folder (the parent)");
  CHECK_ERROR("name: '.'\n", "name: '.' names an existing folder (this one)");
  CHECK_ERROR("name: a/b\n", "name: is used in a folder name and must not contain '/'");
}
