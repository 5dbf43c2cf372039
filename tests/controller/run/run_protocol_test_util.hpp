// Shared by the controller's protocol tests (run_protocol_test.cpp, run_protocol_loss_test.cpp,
// run_protocol_window_test.cpp): the real controller run loop (run_benchmark on a thread) against
// the fake workers of fake_worker.hpp. Over inproc:// on one zmq context, with a 25 ms heartbeat
// and 4 misses before a worker is lost (RunSeams), so each case takes a fraction of a second.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <zmq.hpp>

#include "controller/run/run.hpp"
#include "fake_worker.hpp"
#include "test_util.hpp"

namespace convoy::test {

// correlation id -> worker ids of its records.
inline std::map<std::string, std::set<std::string>> record_workers(
    const std::filesystem::path& path, size_t* lines = nullptr) {
  std::map<std::string, std::set<std::string>> out;
  const auto records = read_jsonl(path);
  for (const auto& d : records) {
    out[d["x_correlation_id"].GetString()].insert(d["worker_id"].GetString());
  }
  if (lines) *lines = records.size();
  return out;
}

inline std::set<std::string> string_set(const rapidjson::Value& array) {
  std::set<std::string> out;
  for (const auto& v : array.GetArray()) out.insert(v.GetString());
  return out;
}

// Captures this process's stderr (where the log goes) into a file while alive.
class StderrCapture {
 public:
  explicit StderrCapture(std::filesystem::path path) : path_(std::move(path)) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  std::string text() {
    restore();
    return read_file(path_);
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
  }
  std::filesystem::path path_;
  int saved_ = -1;
};

inline constexpr int64_t kTestHeartbeatNs = 25'000'000;
inline constexpr int kTestMissedHeartbeats = 4;  // lost after 100 ms of silence

// One controller run (`convoy controller` semantics) on its own thread, listening on inproc://
// in the context the fake workers use (ctx()).
class ControllerRun {
 public:
  ControllerRun(const std::string& name, int expect_workers, const std::string& extra_yaml)
      : out_(fresh_path("proto-" + name)) {
    endpoint_ = "tcp://127.0.0.1:0";  // for the config's validation; replaced below
    std::string yaml = "name: " + name +
                       "\n"
                       "seed: 7\n"
                       "target:\n"
                       "  url: http://127.0.0.1:" +
                       std::to_string(target_.port()) +
                       "\n"
                       "workers:\n"
                       "  local: 0\n"
                       "  listen: " +
                       endpoint_ +
                       "\n"
                       "  ready_timeout_s: 20\n"
                       "  expect: " +
                       std::to_string(expect_workers) + "\n" + extra_yaml;
    convoy::controller::RunOptions options;
    options.config = convoy::parse_config(yaml, name + ".yaml");
    endpoint_ = "inproc://convoy-proto-" + name;
    options.config.workers.listen = endpoint_;
    options.output_dir = out_.string();
    options.controller_only = true;
    options.quiet = true;
    options_ = std::move(options);
    seams_.context = &ctx_;
    seams_.check_target = false;  // target_ listens but never answers GET /v1/models
    seams_.liveness.heartbeat_period_ns = kTestHeartbeatNs;
    seams_.liveness.missed_heartbeats = kTestMissedHeartbeats;
    seams_.liveness.clock_recheck_ns = 4 * kTestHeartbeatNs;
    thread_ = std::thread([this] {
      try {
        rc_ = convoy::controller::run_benchmark(options_, seams_);
      } catch (const std::exception& e) {
        error_ = e.what();
        rc_ = -1;
      }
      done_ = true;
    });
  }
  ~ControllerRun() {
    if (thread_.joinable()) thread_.join();
    std::filesystem::remove_all(out_);
  }
  ControllerRun(const ControllerRun&) = delete;
  ControllerRun& operator=(const ControllerRun&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  zmq::context_t& ctx() { return ctx_; }
  const std::filesystem::path& out() const { return out_; }
  bool done() const { return done_; }
  // The exit code once the run ended (the thread is joined).
  int rc() {
    REQUIRE(done_);
    thread_.join();
    INFO(error_);
    CHECK(error_.empty());
    return rc_;
  }

 private:
  LoopbackListener target_;
  zmq::context_t ctx_;  // outlives the run's sockets and every fake worker's
  std::filesystem::path out_;
  std::string endpoint_;
  convoy::controller::RunOptions options_;
  convoy::controller::RunSeams seams_;
  std::thread thread_;
  std::atomic<bool> done_{false};
  int rc_ = -1;
  std::string error_;
};

// A small synthetic dataset with a fixed number of turns per conversation.
inline std::string dataset_yaml(int conversations, int turns) {
  std::string t = std::to_string(turns);
  return "dataset:\n"
         "  type: synthetic\n"
         "  conversations: " +
         std::to_string(conversations) +
         "\n"
         "  turns: {mean: " +
         t + ", stddev: 0, min: " + t + ", max: " + t +
         "}\n"
         "  input_tokens: {mean: 16, stddev: 0}\n"
         "  output_tokens: {mean: 4, stddev: 0}\n";
}

}  // namespace convoy::test
