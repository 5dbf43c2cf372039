// The controller's endpoints as `convoy run` binds them: its own workers over ipc:// in a
// folder only this user can enter; an endpoint that cannot be bound fails the run before
// anything starts, naming it.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// The text after `prefix` up to the next space or newline in `text`.
std::string word_after(const std::string& text, const std::string& prefix) {
  size_t at = text.find(prefix);
  if (at == std::string::npos) return "";
  at += prefix.size();
  return text.substr(at, text.find_first_of(" \n", at) - at);
}

}  // namespace

TEST_CASE("convoy run talks to its own workers over ipc in a private folder") {
  fs::path out = fresh_path("e2e-run-ipc");
  // ~20 ms per token: long enough to look at the folder while the run goes on.
  // --verbose: the private folder's endpoints are a debug line (the info line is one: the
  // workers ready).
  std::vector<std::string> argv =
      quickstart_run_argv(out, {"mock.itl_ms=20", "dataset.conversations=16"});
  argv.push_back("--verbose");
  Subprocess run(argv);
  REQUIRE(run.wait_for_output("controller listening on ", 60));
  REQUIRE(run.wait_for_output(")\n", 10));
  INFO(run.output());
  const std::string control = word_after(run.output(), "controller listening on ");
  REQUIRE(control.rfind("ipc://", 0) == 0);
  const fs::path dir = fs::path(control.substr(6)).parent_path();
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(st.st_uid == ::geteuid());
  CHECK(word_after(run.output(), "(results ").rfind("ipc://" + dir.string() + "/", 0) == 0);

  auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  CHECK_FALSE(fs::exists(dir));  // removed at the end
  CHECK(fs::exists(out / "summary.json"));
  fs::remove_all(out);
}

TEST_CASE("a workers.listen endpoint in use fails the run before anything starts") {
  LoopbackListener taken;
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(taken.port());
  fs::path out = fresh_path("e2e-run-in-use");
  Subprocess run(quickstart_run_argv(out, {"workers.listen=" + endpoint}));
  auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(run.output().find("workers.listen " + endpoint + ": cannot bind") != std::string::npos);
  CHECK(run.output().find("Address already in use") != std::string::npos);
  CHECK(run.output().find("started convoy-mock") == std::string::npos);  // nothing started
  fs::remove_all(out);
}

TEST_CASE("a workers.listen host name is a config error, and IPv6 addresses bind") {
  SUBCASE("tcp://localhost:0 exits 2 naming the key") {
    Subprocess run({bin("controller/convoy"), "run", src("configs/quickstart.yaml"), "--quiet",
                    "--set", "workers.listen=tcp://localhost:0"});
    auto rc = run.wait(60);
    INFO(run.output());
    REQUIRE(rc.has_value());
    CHECK(*rc == 2);
    CHECK(run.output().find("workers.listen") != std::string::npos);
    CHECK(run.output().find("tcp://127.0.0.1:PORT") != std::string::npos);
    CHECK(run.output().find("started convoy-mock") == std::string::npos);
  }
  SUBCASE("tcp://[::1]:0 runs") {
    if (read_file("/proc/net/if_inet6").find("00000000000000000000000000000001") ==
        std::string::npos) {
      MESSAGE("skipped: no IPv6 loopback on this machine");
      return;
    }
    fs::path out = fresh_path("e2e-run-ipv6");
    std::vector<std::string> argv =
        quickstart_run_argv(out, {"workers.listen=tcp://[::1]:0", "dataset.conversations=4"});
    argv.push_back("--verbose");  // -q (the helper's) silences info lines
    Subprocess run(argv);
    auto rc = run.wait(120);
    INFO(run.output());
    REQUIRE(rc.has_value());
    CHECK(*rc == 0);
    CHECK(run.output().find("controller listening on tcp://[::1]:") != std::string::npos);
    fs::remove_all(out);
  }
}
