// docs/quickstart.md, run as written: its ```sh blocks in order, with the real binaries. The
// install block is the build this test runs under (skipped); the convoy-mock block is started
// here as its own process (on a free port, sped up so the runs stay short), and localhost:8000
// in every other command becomes that port.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// The body of every ```sh block of a Markdown file, in order.
std::vector<std::string> sh_blocks(const std::string& markdown) {
  std::vector<std::string> blocks;
  std::istringstream in(markdown);
  std::string line;
  std::string block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```sh") {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      blocks.push_back(block);
    } else if (inside) {
      block += line + "\n";
    }
  }
  return blocks;
}

std::string replaced_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

TEST_CASE("docs/quickstart.md: every command runs as written") {
  std::ifstream file(src("docs/quickstart.md"));
  std::stringstream markdown;
  markdown << file.rdbuf();
  const std::vector<std::string> blocks = sh_blocks(markdown.str());
  REQUIRE(blocks.size() >= 5);

  TempDir dir("e2e-quickstart-doc");
  std::unique_ptr<Subprocess> mock;
  std::string host_port;
  std::string script = "set -euo pipefail\ncd '" + dir.path().string() + "'\n";
  int run_blocks = 0;
  for (const std::string& block : blocks) {
    if (block.find("scripts/build") != std::string::npos) continue;  // the build itself
    if (block.rfind("convoy-mock ", 0) == 0) {
      REQUIRE(block == "convoy-mock --port 8000\n");
      mock = std::make_unique<Subprocess>(
          std::vector<std::string>{bin("mock/convoy-mock"), "--port", "0", "--speedup", "20"});
      host_port = mock_url(*mock).substr(std::string("http://").size());
      continue;
    }
    REQUIRE_MESSAGE(mock, "the mock starts before the first command that needs it");
    script += replaced_all(block, "localhost:8000", host_port);
    ++run_blocks;
  }
  CHECK(run_blocks >= 4);
  INFO(script);
  const std::string path = "PATH=" + fs::path(bin("controller/convoy")).parent_path().string() +
                           ":" + fs::path(bin("worker/convoy-worker")).parent_path().string() +
                           ":" + fs::path(bin("mock/convoy-mock")).parent_path().string() + ":" +
                           std::getenv("PATH");
  Subprocess shell({"/bin/bash", "-c", script}, {path});
  const auto rc = shell.wait(300);
  INFO(shell.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  for (const char* made :
       {"results/first/report.html", "results/first/summary.json", "results/auto/summary.json",
        "my-run.yaml", "results/second/summary.json", "results/compare/compare.json"}) {
    CHECK_MESSAGE(fs::exists(dir.path() / made), made);
  }
  CHECK(shell.output().find("--model auto: mock-model") != std::string::npos);
}
