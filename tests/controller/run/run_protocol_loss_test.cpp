// The controller's run loop when workers go silent or come back late (run_protocol_test_util.hpp):
// a lost worker's unstarted work re-homed, every worker lost, a late bye, and when silence
// becomes loss.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fake_worker.hpp"
#include "run_protocol_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
namespace proto = convoy::proto;
using namespace convoy::test;

TEST_CASE("controller protocol: a silent worker is lost, its unstarted work re-homed") {
  // 300 conversations/s, 100 ms lookahead: each worker always holds some conversations that
  // are not due yet, so when one hangs some of its share is re-homed and some is lost.
  ControllerRun run("loss", 3,
                    dataset_yaml(40, 2) +
                        "load: {mode: rate, rate: 300, arrival: constant,"
                        " concurrency: 100000, duration_s: 0.6, grace_s: 0.2}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "survivor-a");
  FakeWorker b(ctx, run.endpoint(), "survivor-b");
  FakeWorker hung(ctx, run.endpoint(), "hangs");
  hung.silent_after_completed = 3;
  std::vector<FakeWorker*> all = {&a, &b, &hung};
  for (FakeWorker* w : all) w->hello();
  REQUIRE(pump(all, 40, [&] { return run.done(); }));
  CHECK(run.rc() == 0);

  REQUIRE(hung.silent);
  REQUIRE(hung.left_in_flight_id.has_value());
  CHECK(hung.completed == 3);

  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  const auto& r = summary["run"];
  CHECK(string_set(r["lost_workers"]) == std::set<std::string>{"hangs"});
  std::set<std::string> lost = string_set(r["lost_conversations"]);
  CHECK(r["lost_conversation_count"].GetInt64() == static_cast<int64_t>(lost.size()));
  CHECK(lost.count(*hung.left_in_flight_id) == 1);

  std::set<std::string> survivor_ids;
  for (FakeWorker* w : {&a, &b}) {
    for (const auto& c : w->assigned) survivor_ids.insert(c.correlation_id);
  }
  // Everything the hung worker was given is exactly one of: completed by it, re-homed to a
  // survivor (never started, so never reported lost), or lost.
  std::set<std::string> rehomed;
  for (const auto& c : hung.assigned) {
    const std::string& id = c.correlation_id;
    const bool done_here = hung.completed_ids.count(id) > 0;
    const bool moved = survivor_ids.count(id) > 0;
    const bool was_lost = lost.count(id) > 0;
    CHECK_MESSAGE(int{done_here} + int{moved} + int{was_lost} == 1, id);
    if (moved) rehomed.insert(id);
  }
  CHECK_FALSE(rehomed.empty());
  for (const auto& id : lost) CHECK_MESSAGE(survivor_ids.count(id) == 0, id);

  // Records: a conversation's turns all come from one worker; a re-homed one only from its
  // survivor, a lost one only from the hung worker.
  auto by_conversation = record_workers(run.out() / "records.jsonl");
  for (const auto& entry : by_conversation) {
    // Not a structured binding: doctest's message macros capture it in a lambda (clang 14).
    const std::string& id = entry.first;
    const std::set<std::string>& workers = entry.second;
    CHECK_MESSAGE(workers.size() == 1, id);
    if (rehomed.count(id)) CHECK(workers.count("hangs") == 0);
    if (lost.count(id)) CHECK(workers == std::set<std::string>{"hangs"});
  }
  for (const auto& id : rehomed) CHECK_MESSAGE(by_conversation.count(id) == 1, id);
}

TEST_CASE("controller protocol: all workers lost ends the run with exit 3 and a summary") {
  ControllerRun run("all-lost", 2,
                    dataset_yaml(50, 2) + "load: {mode: concurrency, concurrency: 4}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "doomed-a");
  FakeWorker b(ctx, run.endpoint(), "doomed-b");
  a.silent_after_completed = 1;
  b.silent_after_completed = 1;
  for (FakeWorker* w : {&a, &b}) w->hello();
  REQUIRE(pump({&a, &b}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 3);

  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  const auto& r = summary["run"];
  CHECK(r["incomplete"].GetBool());
  CHECK(std::string(r["incomplete_reason"].GetString()).find("all workers lost") !=
        std::string::npos);
  CHECK(string_set(r["lost_workers"]) == std::set<std::string>{"doomed-a", "doomed-b"});
  std::set<std::string> lost = string_set(r["lost_conversations"]);
  for (FakeWorker* w : {&a, &b}) {
    if (w->left_in_flight_id) CHECK(lost.count(*w->left_in_flight_id) == 1);
  }
  size_t lines = 0;
  record_workers(run.out() / "records.jsonl", &lines);
  CHECK(lines >= 2 * 2);  // one conversation each, two turns  // the conversations completed before
                          // the hang are all there
  CHECK(summary["time_to_first_token"]["count"].GetInt64() == static_cast<int64_t>(lines));
}

TEST_CASE("controller protocol: a worker declared lost stays lost when its bye comes late") {
  fs::path log_path =
      fs::temp_directory_path() / ("convoy-proto-late-bye-" + std::to_string(::getpid()) + ".log");
  StderrCapture capture(log_path);
  ControllerRun run("late-bye", 2,
                    dataset_yaml(40, 2) +
                        "load: {mode: rate, rate: 100, arrival: constant,"
                        " concurrency: 100000, duration_s: 0.8, grace_s: 0.2}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "survivor");
  FakeWorker hung(ctx, run.endpoint(), "comes-back");
  hung.silent_after_completed = 2;
  for (FakeWorker* w : {&a, &hung}) w->hello();
  // Until the controller has declared it lost (its log says so), then it speaks again: a Bye
  // with its real token.
  REQUIRE(pump({&a, &hung}, 30, [&] {
    return read_file(log_path).find("worker comes-back lost") != std::string::npos;
  }));
  REQUIRE_FALSE(run.done());
  proto::Bye bye{"comes-back", hung.token, "done", 0};
  hung.send_raw_results(proto::encode(bye));
  REQUIRE(pump({&a}, 30, [&] { return run.done(); }));
  int rc = run.rc();
  std::string log = capture.text();
  INFO(log);
  CHECK(rc == 0);
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  std::map<std::string, std::string> states;
  for (const auto& w : summary["workers"].GetArray()) {
    states[w["worker_id"].GetString()] = w["state"].GetString();
  }
  CHECK(states["comes-back"] == "lost");
  CHECK(states["survivor"] == "done");
  CHECK(string_set(summary["run"]["lost_workers"]) == std::set<std::string>{"comes-back"});
  CHECK(summary["run"]["forged_messages"].GetInt64() == 0);  // its bye was genuine
  fs::remove(log_path);
}

TEST_CASE("controller protocol: a silent worker is declared lost after misses times the period") {
  fs::path log_path =
      fs::temp_directory_path() / ("convoy-proto-liveness-" + std::to_string(::getpid()) + ".log");
  StderrCapture capture(log_path);
  ControllerRun run("liveness", 2,
                    dataset_yaml(40, 1) +
                        "load: {mode: rate, rate: 50, arrival: constant,"
                        " concurrency: 100000, duration_s: 0.6, grace_s: 0.1}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "steady");
  FakeWorker quiet(ctx, run.endpoint(), "quiet");
  quiet.silent_after_completed = 1;
  for (FakeWorker* w : {&a, &quiet}) w->hello();
  int64_t silent_at = 0;
  int64_t lost_at = 0;
  REQUIRE(pump({&a, &quiet}, 30, [&] {
    if (quiet.silent && silent_at == 0) silent_at = steady_ns();
    if (silent_at != 0 && read_file(log_path).find("worker quiet lost") != std::string::npos) {
      lost_at = steady_ns();
    }
    return lost_at != 0;
  }));
  REQUIRE(pump({&a}, 30, [&] { return run.done(); }));
  const int rc = run.rc();
  std::string log = capture.text();
  INFO(log);
  CHECK(rc == 0);
  // 4 missed 25 ms heartbeats: lost no sooner than 100 ms after its last word (give 20 ms for
  // the last message it sent before going quiet), and long before the 3 s users get.
  const double waited_ms = static_cast<double>(lost_at - silent_at) / 1e6;
  CHECK(waited_ms >= 80);
  CHECK(waited_ms < 1000);
  CHECK(log.find("worker quiet lost (no heartbeat for 0.1 s)") != std::string::npos);
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(string_set(summary["run"]["lost_workers"]) == std::set<std::string>{"quiet"});
  fs::remove(log_path);
}
