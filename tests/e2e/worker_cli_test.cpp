// End to end, the real convoy-worker binary: a bad command line gets a clear message and exit
// code 2 (kExitBadInput, shared with `convoy`), never an abort; --help and --version exit 0.
// And --version of all three binaries: the version and the git commit they were built from.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

using namespace convoy::test;

namespace {

struct Outcome {
  int rc = -1;
  std::string output;
};

// Runs `argv` to its end (30 s at most).
Outcome run_to_end(const std::vector<std::string>& argv) {
  Subprocess child(argv);
  const auto rc = child.wait(30);
  REQUIRE_MESSAGE(rc.has_value(), argv[0], " did not exit: ", child.output());
  return {*rc, child.output()};
}

// Runs convoy-worker with `args`; a bad command line exits before it connects anywhere.
Outcome run_worker(std::vector<std::string> args) {
  args.insert(args.begin(), bin("worker/convoy-worker"));
  return run_to_end(args);
}

// project(convoy VERSION x.y.z) in the top CMakeLists.txt.
std::string project_version() {
  std::ifstream in(src("CMakeLists.txt"));
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  REQUIRE(std::regex_search(s, m, std::regex(R"(project\(convoy VERSION ([0-9.]+))")));
  return m[1];
}

// The commit of the source checkout, asked of git here: "unknown" where the source folder is
// not the top of a git checkout (what the build writes then).
std::string source_commit() {
  const std::string source = std::filesystem::canonical(CONVOY_SOURCE_DIR).string();
  const Outcome top =
      run_to_end({"/usr/bin/env", "git", "-C", source, "rev-parse", "--show-toplevel"});
  if (top.rc != 0 || top.output != source + "\n") return "unknown";
  const Outcome head =
      run_to_end({"/usr/bin/env", "git", "-C", source, "rev-parse", "--short", "HEAD"});
  REQUIRE(head.rc == 0);
  return head.output.substr(0, head.output.find('\n'));
}

bool cli_has_text(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("convoy-worker rejects a bad command line with a message and exit code 2") {
  const std::string ok = "tcp://127.0.0.1:1";
  struct Case {
    std::vector<std::string> args;
    std::string says;  // part of the message
  };
  const std::vector<Case> cases = {
      {{"--connect", ok, "--wait-s", "abc"}, "--wait-s: expected a number of seconds"},
      {{"--connect", ok, "--wait-s", "-1"}, "--wait-s"},
      {{"--connect", ok, "--wait-s", "0"}, "--wait-s"},
      {{"--connect", ok, "--wait-s"}, "--wait-s"},
      {{"--connect", ok, "--no-such-flag"}, "--no-such-flag"},
      {{"--connect", ok, "stray"}, "stray"},
      {{}, "--connect"},
      {{"--connect", "http://127.0.0.1:1"}, "tcp://HOST:PORT"},
      {{"--connect", ok, "--id", ""}, "--id"},
      {{"--connect", ok, "--curve-key", "/no/such/worker-0.key"}, "--curve-key"},
  };
  for (const auto& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += " '" + a + "'";
    INFO("convoy-worker" << joined);
    const Outcome o = run_worker(c.args);
    INFO(o.output);
    CHECK(o.rc == convoy::kExitBadInput);
    CHECK(cli_has_text(o.output, c.says));
    CHECK(cli_has_text(o.output, "--help"));  // where to look next
  }
}

TEST_CASE("convoy-worker --curve-key and --curve-server-key go together") {
  TempDir dir("convoy-worker-cli-");
  const std::string key = (dir.path() / "worker-0.key").string();
  std::ofstream(key) << "not a real key\n";
  const Outcome o = run_worker({"--connect", "tcp://127.0.0.1:1", "--curve-key", key});
  INFO(o.output);
  CHECK(o.rc == convoy::kExitBadInput);
  CHECK(cli_has_text(o.output, "--curve-server-key"));
}

TEST_CASE("convoy-worker --help and --version exit 0") {
  const Outcome help = run_worker({"--help"});
  CHECK(help.rc == convoy::kExitOk);
  CHECK(cli_has_text(help.output, "--connect"));
  CHECK(cli_has_text(help.output, "--wait-s"));
  const Outcome version = run_worker({"--version"});
  CHECK(version.rc == convoy::kExitOk);
  CHECK_FALSE(version.output.empty());
}

TEST_CASE("convoy, convoy-worker and convoy-mock --version print the version and the git commit") {
  const std::string expected = project_version() + " (git " + source_commit() + ")\n";
  for (const std::string program :
       {"controller/convoy", "worker/convoy-worker", "mock/convoy-mock"}) {
    const std::string name = program.substr(program.find('/') + 1);
    INFO(name);
    const Outcome o = run_to_end({bin(program), "--version"});
    CHECK(o.rc == convoy::kExitOk);
    CHECK(o.output == name + " " + expected);
  }
}
