// The controller's run loop with windowed conversations (run_protocol_test_util.hpp):
// load.requests and warmup by count commit their turns as they enter the window, and a worker
// lost or leaving keeps or hands back its window.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fake_worker.hpp"
#include "run_protocol_test_util.hpp"
#include "test_util.hpp"

namespace proto = convoy::proto;
using namespace convoy::test;

TEST_CASE("controller protocol: load.requests is windowed and sends exactly what it committed") {
  ControllerRun run(
      "requests-window", 2,
      dataset_yaml(40, 3) + "load: {mode: concurrency, concurrency: 4, requests: 25}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "budget-a");
  FakeWorker b(ctx, run.endpoint(), "budget-b");
  for (FakeWorker* w : {&a, &b}) w->hello();
  REQUIRE(pump({&a, &b}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  // Window conversations commit their turns as they enter the window: every conversation the
  // workers were given ran, and all of them together were granted exactly load.requests turns
  // (the last one cut to fit).
  CHECK(a.window_ids.size() + b.window_ids.size() > 0);
  size_t granted = 0;
  for (FakeWorker* w : {&a, &b}) {
    for (const auto& c : w->assigned) granted += c.turns.size();
    CHECK(w->completed_ids.size() == w->assigned.size());
  }
  CHECK(granted == 25);
  size_t lines = 0;
  record_workers(run.out() / "records.jsonl", &lines);
  CHECK(lines == 25);
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["request_count"]["avg"].GetDouble() == 25);
}

TEST_CASE("controller protocol: warmup by count is windowed and ends before the measure starts") {
  ControllerRun run("warmup-window", 2,
                    dataset_yaml(40, 2) +
                        "load: {mode: concurrency, concurrency: 4, warmup_sessions: 12,"
                        " sessions: 12}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "warm-a");
  FakeWorker b(ctx, run.endpoint(), "warm-b");
  for (FakeWorker* w : {&a, &b}) w->hello();
  REQUIRE(pump({&a, &b}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  int warmup_windowed = 0;
  for (FakeWorker* w : {&a, &b}) {
    for (const auto& c : w->assigned) {
      if (c.phase == proto::Phase::kWarmup && w->window_ids.count(c.correlation_id)) {
        ++warmup_windowed;
      }
    }
  }
  CHECK(warmup_windowed > 0);
  // No warmup conversation started in the measure: the measure begins once every warmup
  // conversation, windows included, has ended.
  int64_t last_warmup_sent = 0;
  int64_t first_measure_sent = INT64_MAX;
  int warmup = 0;
  int measure = 0;
  for (const auto& r : read_jsonl(run.out() / "records.jsonl")) {
    const int64_t sent = r["sent_ns"].GetInt64();
    if (std::string(r["phase"].GetString()) == "warmup") {
      ++warmup;
      last_warmup_sent = std::max(last_warmup_sent, sent);
    } else {
      ++measure;
      first_measure_sent = std::min(first_measure_sent, sent);
    }
  }
  CHECK(warmup == 24);
  CHECK(measure == 24);
  CHECK(last_warmup_sent < first_measure_sent);
}

TEST_CASE("controller protocol: under load.requests a lost worker's window is lost, not resent") {
  constexpr int kRequests = 60;
  ControllerRun run("requests-loss", 3,
                    dataset_yaml(100, 1) + "load: {mode: concurrency, concurrency: 6, requests: " +
                        std::to_string(kRequests) + "}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "keeps-a");
  FakeWorker b(ctx, run.endpoint(), "keeps-b");
  FakeWorker hung(ctx, run.endpoint(), "hangs");
  hung.silent_after_completed = 2;
  std::vector<FakeWorker*> all = {&a, &b, &hung};
  for (FakeWorker* w : all) w->hello();
  REQUIRE(pump(all, 40, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  REQUIRE(hung.silent);
  // The hung worker may have started any of its window in a slot of its own, by an end that
  // never arrived: none of it goes to a survivor, and it keeps its commitment.
  REQUIRE_FALSE(hung.window_ids.empty());
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  std::set<std::string> lost = string_set(summary["run"]["lost_conversations"]);
  std::set<std::string> survivor_ids;
  for (FakeWorker* w : {&a, &b}) {
    for (const auto& c : w->assigned) survivor_ids.insert(c.correlation_id);
  }
  int lost_window = 0;
  for (const auto& c : hung.assigned) {
    const std::string& id = c.correlation_id;
    CHECK_MESSAGE(survivor_ids.count(id) == 0, id);
    CHECK_MESSAGE(hung.completed_ids.count(id) + lost.count(id) == 1, id);
    if (hung.window_ids.count(id) && lost.count(id)) ++lost_window;
  }
  CHECK(lost_window > 0);
  // One request per conversation: the records are the budget less what the lost ones never
  // sent (all but the one left in flight, whose only request was sent).
  size_t lines = 0;
  record_workers(run.out() / "records.jsonl", &lines);
  REQUIRE(hung.left_in_flight_id.has_value());
  CHECK(lost.count(*hung.left_in_flight_id) == 1);
  CHECK(static_cast<int>(lines + lost.size()) == kRequests + 1);
}

TEST_CASE("controller protocol: a worker that leaves mid-run hands its window to the others") {
  std::string stop;
  size_t expected_records = 0;
  SUBCASE("load.sessions stays exact") {
    stop = "sessions: 30";
    expected_records = 30;
  }
  SUBCASE("load.requests stays exact") {
    stop = "requests: 40";
    expected_records = 40;
  }
  CAPTURE(stop);
  ControllerRun run(
      "leaves", 2,
      dataset_yaml(100, 1) + "load: {mode: concurrency, concurrency: 4, " + stop + "}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker stays(ctx, run.endpoint(), "stays");
  FakeWorker leaves(ctx, run.endpoint(), "leaves");
  leaves.leave_after_completed = 2;
  for (FakeWorker* w : {&stays, &leaves}) w->hello();
  REQUIRE(pump({&stays, &leaves}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  REQUIRE(leaves.bye_sent);
  REQUIRE_FALSE(leaves.window_ids.empty());
  // What it gave back ran on the worker that stayed, and nothing more went to the one that left.
  std::set<std::string> stayed_ids;
  for (const auto& c : stays.assigned) stayed_ids.insert(c.correlation_id);
  for (const auto& c : leaves.assigned) {
    const std::string& id = c.correlation_id;
    CHECK_MESSAGE(leaves.completed_ids.count(id) + stayed_ids.count(id) == 1, id);
  }
  size_t lines = 0;
  const auto by_conversation = record_workers(run.out() / "records.jsonl", &lines);
  CHECK(lines == expected_records);
  CHECK(by_conversation.size() == expected_records);  // one request each
}
