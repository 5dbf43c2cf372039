// LocalProcesses: the mock and local workers convoy run starts, against stand-in scripts found
// through CONVOY_BIN_DIR (no real worker or mock runs).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "controller/config/config.hpp"
#include "controller/run/local_processes.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using convoy::controller::LocalProcesses;

namespace {

// A folder of stand-in executables, set as CONVOY_BIN_DIR while alive.
class FakeBinDir {
 public:
  FakeBinDir() : dir_(convoy::test::fresh_dir("local-processes")) {
    const char* old = std::getenv("CONVOY_BIN_DIR");
    if (old) old_ = old;
    ::setenv("CONVOY_BIN_DIR", dir_.c_str(), 1);
  }
  ~FakeBinDir() {
    if (old_) {
      ::setenv("CONVOY_BIN_DIR", old_->c_str(), 1);
    } else {
      ::unsetenv("CONVOY_BIN_DIR");
    }
    fs::remove_all(dir_);
  }
  FakeBinDir(const FakeBinDir&) = delete;
  FakeBinDir& operator=(const FakeBinDir&) = delete;

  void script(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
  }

 private:
  fs::path dir_;
  std::optional<std::string> old_;
};

convoy::Config config_with_local(int local) {
  convoy::Config c = convoy::parse_config("name: lp\ntarget:\n  url: mock\n", "lp.yaml");
  c.workers.local = local;
  return c;
}

// Polls `done` for up to 5 s.
template <class Done>
bool within_5s(Done&& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("local processes: the mock's address is read from its first line") {
  FakeBinDir bin;
  bin.script("convoy-mock", "echo 'convoy-mock listening on http://127.0.0.1:4321'\nexec sleep 30");
  LocalProcesses local;
  CHECK(local.start_mock(config_with_local(0)) == "http://127.0.0.1:4321");
  local.stop_mock(1000);  // SIGTERM ends the sleep: the test does not wait 30 s
}

TEST_CASE("local processes: a mock that reports no address is an error") {
  FakeBinDir bin;
  bin.script("convoy-mock", "echo 'something else'");
  LocalProcesses local;
  CHECK_THROWS_WITH_AS(local.start_mock(config_with_local(0)),
                       doctest::Contains("did not report its address"), std::runtime_error);
}

TEST_CASE("local processes: a local worker that exits with an error is reported") {
  FakeBinDir bin;
  bin.script("convoy-worker", "exit 3");
  LocalProcesses local;
  local.start_workers(config_with_local(2), "ipc:///nowhere");
  CHECK(local.worker_count() == 2);
  REQUIRE(within_5s([&] { return local.workers_exited(); }));
  CHECK(local.failed_worker_status() == 3);
}

TEST_CASE("local processes: running workers are no failure and stop ends them promptly") {
  FakeBinDir bin;
  bin.script("convoy-worker", "exec sleep 30");
  LocalProcesses local;
  local.start_workers(config_with_local(2), "ipc:///nowhere");
  CHECK_FALSE(local.workers_exited());
  CHECK_FALSE(local.failed_worker_status().has_value());
  const auto t0 = std::chrono::steady_clock::now();
  local.stop_workers(2000);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(local.workers_exited());
}

TEST_CASE("local processes: no local workers means none to wait for") {
  LocalProcesses local;
  local.start_workers(config_with_local(0), "ipc:///nowhere");
  CHECK(local.worker_count() == 0);
  CHECK(local.workers_exited());
  CHECK_FALSE(local.failed_worker_status().has_value());
}
