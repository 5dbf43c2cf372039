// The real controller run loop against fake workers that speak the wire protocol
// (run_protocol_test_util.hpp): registration and version checks, sharding, malformed and forged
// messages, peers that are not the run's workers, undecodable conversations, clock re-checks.
// Worker loss is in run_protocol_loss_test.cpp, load.requests and warmup windows in
// run_protocol_window_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "controller/run/registry.hpp"
#include "controller/run/sharding.hpp"
#include "fake_worker.hpp"
#include "run_protocol_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
namespace proto = convoy::proto;
using namespace convoy::test;

TEST_CASE("controller protocol: a worker of another protocol version is refused") {
  ControllerRun run("version", 2,
                    dataset_yaml(6, 2) + "load: {mode: concurrency, concurrency: 2}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "good-a");
  FakeWorker b(ctx, run.endpoint(), "good-b");
  const uint32_t other = proto::kProtocolVersion + 1;
  FakeWorker old(ctx, run.endpoint(), "other-version", other);
  // The old worker first, and wait for its answer: once two good workers are ready the run can
  // end before a late hello is even read.
  old.hello();
  REQUIRE(pump({&old}, 30, [&] { return old.rejected; }));
  for (FakeWorker* w : {&a, &b}) w->hello();

  REQUIRE(pump({&a, &b, &old}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);

  REQUIRE(old.rejected);
  INFO(old.reject_reason);
  CHECK(old.reject_reason.find("version " + std::to_string(other)) != std::string::npos);
  CHECK(old.reject_reason.find("version " + std::to_string(proto::kProtocolVersion)) !=
        std::string::npos);
  CHECK_FALSE(old.welcomed);
  CHECK(old.assigned.empty());

  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  std::set<std::string> ids;
  for (const auto& w : summary["workers"].GetArray()) ids.insert(w["worker_id"].GetString());
  CHECK(ids == std::set<std::string>{"good-a", "good-b"});
  CHECK(a.completed + b.completed == 6);
}

TEST_CASE("controller protocol: conversations are sharded whole and results land in outputs") {
  constexpr int kConversations = 30;
  constexpr int kTurns = 3;
  ControllerRun run(
      "sharded", 3,
      dataset_yaml(kConversations, kTurns) + "load: {mode: concurrency, concurrency: 6}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker w0(ctx, run.endpoint(), "fake-0");
  FakeWorker w1(ctx, run.endpoint(), "fake-1");
  FakeWorker w2(ctx, run.endpoint(), "fake-2");
  std::vector<FakeWorker*> all = {&w0, &w1, &w2};
  for (FakeWorker* w : all) {
    w->heartbeat_legacy_open_sessions = 5;  // the Bye (0) must win over the last heartbeat
    w->hello();
  }
  REQUIRE(pump(all, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);

  // Each conversation went to exactly one worker: the rendezvous choice over the three.
  convoy::controller::Sharder sharder;
  for (FakeWorker* w : all) sharder.add_worker(w->id());
  std::map<std::string, std::string> owner;
  for (FakeWorker* w : all) {
    CHECK(w->welcomed);
    CHECK(w->bye_sent);
    CHECK(w->unexpected.empty());
    for (const auto& c : w->assigned) {
      CHECK_MESSAGE(owner.emplace(c.correlation_id, w->id()).second,
                    c.correlation_id << " assigned twice");
      CHECK(sharder.pick(c.correlation_id) == w->id());
      CHECK(c.turns.size() == kTurns);
    }
  }
  CHECK(owner.size() == kConversations);

  size_t lines = 0;
  auto by_conversation = record_workers(run.out() / "records.jsonl", &lines);
  CHECK(lines == kConversations * kTurns);
  CHECK(by_conversation.size() == kConversations);
  for (const auto& [id, workers] : by_conversation) {
    REQUIRE(workers.size() == 1);
    CHECK(*workers.begin() == owner[id]);
  }

  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["time_to_first_token"]["count"].GetInt64() == kConversations * kTurns);
  CHECK(summary["error_request_count"]["avg"].GetDouble() == 0);
  CHECK(summary["run"]["lost_workers"].Size() == 0);
  CHECK(summary["run"]["lost_conversation_count"].GetInt64() == 0);
  CHECK_FALSE(summary["run"]["incomplete"].GetBool());
  REQUIRE(summary["workers"].Size() == 3);
  int64_t records = 0;
  for (const auto& w : summary["workers"].GetArray()) {
    INFO(std::string(w["worker_id"].GetString()));
    CHECK(std::string(w["state"].GetString()) == "done");  // its Bye was received
    CHECK(w["legacy_open_sessions"].GetInt64() == 0);
    CHECK(w["clock_rtt_ns"].GetInt64() >= 0);
    records += w["records"].GetInt64();
  }
  CHECK(records == kConversations * kTurns);
}

TEST_CASE("controller protocol: malformed messages are logged and dropped, never fatal") {
  fs::path log_path =
      fs::temp_directory_path() / ("convoy-proto-malformed-" + std::to_string(::getpid()) + ".log");
  StderrCapture capture(log_path);
  ControllerRun run("malformed", 1,
                    dataset_yaml(8, 2) + "load: {mode: concurrency, concurrency: 4}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker w(ctx, run.endpoint(), "noisy");
  // Before registering: garbage, an unknown type, and a known type with the wrong body.
  w.send_raw_control("\xc1\xc1 definitely not msgpack");
  msgpack::sbuffer body;
  msgpack::pack(body, 12345);
  w.send_raw_control(proto::encode_raw(static_cast<proto::MsgType>(99), body, 1));
  w.send_raw_control(proto::encode_raw(proto::MsgType::kHello, body, proto::kProtocolVersion));
  w.hello();
  REQUIRE(pump({&w}, 30, [&] { return w.welcomed; }));
  // After registering: garbage on both sockets, and a message only a controller sends.
  w.send_raw_control(std::string(64, '\xff'));
  w.send_raw_results("garbage on the results socket");
  w.send_raw_results(proto::encode(proto::Ping{1, 2}));
  w.send_control(proto::Assign{});

  REQUIRE(pump({&w}, 30, [&] { return run.done(); }));
  int rc = run.rc();
  std::string log = capture.text();
  INFO(log);
  CHECK(rc == 0);
  CHECK(w.completed == 8);
  CHECK(log.find("dropped a malformed message from noisy") != std::string::npos);
  CHECK(log.find("unknown message type 99") != std::string::npos);
  CHECK(log.find("dropped a malformed result batch") != std::string::npos);
  CHECK(log.find("dropped an unexpected ping on the results socket") != std::string::npos);
  CHECK(log.find("dropped an unexpected assign from noisy") != std::string::npos);
  size_t lines = 0;
  record_workers(run.out() / "records.jsonl", &lines);
  CHECK(lines == 16);
  fs::remove(log_path);
}

namespace {

// A record a forger makes up for `worker_id`.
proto::Record forged_record(const std::string& correlation_id) {
  proto::Record r;
  r.x_request_id = "forged-request";
  r.x_correlation_id = correlation_id;
  r.conversation_id = "forged";
  r.turn_index = 0;
  r.final_turn = true;
  r.sent_ns = 1;
  r.first_token_ns = 2;
  r.end_ns = 3;
  r.output_tokens = 1;
  r.http_status = 200;
  return r;
}

}  // namespace

TEST_CASE("controller protocol: results and byes without the worker's token are dropped") {
  ControllerRun run("forged", 2,
                    dataset_yaml(20, 2) + "load: {mode: concurrency, concurrency: 4}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "fake-a");
  FakeWorker b(ctx, run.endpoint(), "fake-b");
  for (FakeWorker* w : {&a, &b}) w->hello();
  REQUIRE(pump({&a, &b}, 30, [&] { return a.welcomed && b.welcomed; }));
  CHECK(a.token.size() >= 32);
  CHECK(a.token != b.token);

  // Another local process that found the results endpoint: it claims to be fake-a.
  zmq::socket_t forger(ctx, zmq::socket_type::push);
  forger.set(zmq::sockopt::linger, 1000);
  forger.connect(a.results_endpoint);
  auto push = [&](const std::string& bytes) { REQUIRE(forger.send(zmq::buffer(bytes))); };
  proto::Results wrong_token;
  wrong_token.worker_id = "fake-a";
  wrong_token.token = std::string(a.token.size(), '0');
  wrong_token.records = {forged_record("forged-wrong-token")};
  push(proto::encode(wrong_token));
  proto::Results no_token = wrong_token;
  no_token.token.clear();
  no_token.records = {forged_record("forged-no-token")};
  push(proto::encode(no_token));
  proto::Results stranger = wrong_token;
  stranger.worker_id = "nobody";
  stranger.token = a.token;  // even a real token, under another name
  stranger.records = {forged_record("forged-stranger")};
  push(proto::encode(stranger));
  // A forged bye would take fake-a out of the run before it started.
  push(proto::encode(proto::Bye{"fake-a", "not-the-token", "done", 0}));

  REQUIRE(pump({&a, &b}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  CHECK(a.completed > 0);
  CHECK(a.completed + b.completed == 20);

  size_t lines = 0;
  auto by_conversation = record_workers(run.out() / "records.jsonl", &lines);
  CHECK(lines == 40);
  for (const char* id : {"forged-wrong-token", "forged-no-token", "forged-stranger"}) {
    CHECK_MESSAGE(by_conversation.count(id) == 0, id);
  }
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["run"]["forged_messages"].GetInt64() == 4);
  CHECK(summary["time_to_first_token"]["count"].GetInt64() == 40);
  for (const auto& w : summary["workers"].GetArray()) {
    CHECK(std::string(w["state"].GetString()) == "done");
  }
}

TEST_CASE("controller protocol: an authenticated worker's malformed records are dropped") {
  ControllerRun run("malformed", 1,
                    dataset_yaml(10, 1) + "load: {mode: concurrency, concurrency: 2}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "fake-a");
  a.hello();
  REQUIRE(pump({&a}, 30, [&] { return a.welcomed; }));
  // With its real token: negative tokens, a time an hour past the run, a URL that is not there.
  zmq::socket_t push(ctx, zmq::socket_type::push);
  push.set(zmq::sockopt::linger, 1000);
  push.connect(a.results_endpoint);
  proto::Results bad;
  bad.worker_id = "fake-a";
  bad.token = a.token;
  for (const char* id : {"bad-tokens", "bad-time", "bad-url"}) {
    proto::Record r = forged_record(id);
    r.intended_ns = steady_ns();
    r.sent_ns = r.intended_ns + 1;
    r.first_token_ns = r.intended_ns + 2;
    r.end_ns = r.intended_ns + 3;
    bad.records.push_back(r);
  }
  bad.records[0].output_tokens = -7;
  bad.records[1].end_ns += int64_t{3600} * 1'000'000'000;
  bad.records[2].url_index = 5;
  REQUIRE(push.send(zmq::buffer(proto::encode(bad))));
  REQUIRE(pump({&a}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  CHECK(a.completed == 10);
  size_t lines = 0;
  auto by_conversation = record_workers(run.out() / "records.jsonl", &lines);
  CHECK(lines == 10);
  for (const char* id : {"bad-tokens", "bad-time", "bad-url"}) {
    CHECK_MESSAGE(by_conversation.count(id) == 0, id);
  }
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["run"]["malformed_records"].GetInt64() == 3);
  CHECK(summary["output_token_throughput"]["avg"].GetDouble() >= 0);
  std::string reasons;
  for (const auto& r : summary["verdict"]["reasons"].GetArray()) reasons += r.GetString();
  CHECK(reasons.find("3 malformed record(s) from authenticated workers were dropped, in no "
                     "metric (output_tokens -7 < 0") != std::string::npos);
}

TEST_CASE("controller protocol: a hello flood beyond workers.expect registers no phantom") {
  fs::path log_path =
      fs::temp_directory_path() / ("convoy-proto-flood-" + std::to_string(::getpid()) + ".log");
  StderrCapture capture(log_path);
  constexpr int kPhantoms = 300;
  // Long enough (0.8 s) for every phantom's hello to be answered while the run goes on.
  ControllerRun run(
      "flood", 2,
      dataset_yaml(30, 2) + "load: {mode: rate, rate: 40, arrival: constant, duration_s: 0.8}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker a(ctx, run.endpoint(), "real-a");
  FakeWorker b(ctx, run.endpoint(), "real-b");
  // 300 connections, each with an id of its own (one with bytes no log should print raw), made
  // before the run starts: making them takes the test thread away from the real workers.
  std::vector<std::unique_ptr<FakeWorker>> phantoms;
  for (int i = 0; i < kPhantoms; ++i) {
    std::string id = i == 0 ? std::string("phantom-\x1b[31m-\xff") : "phantom-" + std::to_string(i);
    phantoms.push_back(std::make_unique<FakeWorker>(ctx, run.endpoint(), id));
  }
  for (FakeWorker* w : {&a, &b}) w->hello();
  REQUIRE(pump({&a, &b}, 30, [&] { return a.welcomed && b.welcomed; }));
  // Refused first, so that its refusal is among the ones logged (the first ten are).
  FakeWorker* first = phantoms.front().get();
  first->hello();
  REQUIRE(pump({&a, &b, first}, 30, [&] { return first->rejected; }));
  for (auto& p : phantoms) {
    if (p.get() != first) p->hello();
  }
  std::vector<FakeWorker*> everyone = {&a, &b};
  for (auto& p : phantoms) everyone.push_back(p.get());
  auto all_rejected = [&] {
    return std::all_of(phantoms.begin(), phantoms.end(), [](const auto& p) { return p->rejected; });
  };
  REQUIRE(pump(everyone, 60, [&] { return run.done() && all_rejected(); }));
  int rc = run.rc();
  std::string log = capture.text();
  CHECK(rc == 0);
  for (const auto& p : phantoms) {
    CHECK_FALSE(p->welcomed);
    CHECK(p->assigned.empty());
  }
  CHECK(a.completed + b.completed > 0);
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  std::set<std::string> ids;
  for (const auto& w : summary["workers"].GetArray()) ids.insert(w["worker_id"].GetString());
  CHECK(ids == std::set<std::string>{"real-a", "real-b"});
  // Every hello refused is counted (a phantom may say hello again before its Reject arrives).
  CHECK(summary["run"]["rejected_workers"].GetInt64() >= kPhantoms);
  CHECK(summary["run"]["lost_workers"].Size() == 0);
  // Refused hellos are no reason for a warning. On a loaded machine the test thread, busy
  // answering 300 phantoms, can start conversations late: that warning is the only one allowed.
  for (const auto& reason : summary["verdict"]["reasons"].GetArray()) {
    const std::string r = reason.GetString();
    INFO(r);
    CHECK(r.rfind("schedule_lag", 0) == 0);
  }
  CHECK(std::string(summary["verdict"]["status"].GetString()) != "fail");
  // The refusals are logged in moderation, peer bytes escaped.
  CHECK(log.find("refused worker") != std::string::npos);
  CHECK(log.find('\x1b') == std::string::npos);
  CHECK(log.find('\xff') == std::string::npos);
  CHECK(log.find("phantom-\\x1b[31m-\\xff") != std::string::npos);
  fs::remove(log_path);
}

TEST_CASE("controller protocol: peers that only repeat hello hold no slot, the real ones join") {
  ControllerRun run(
      "squat", 2,
      dataset_yaml(20, 2) + "load: {mode: rate, rate: 40, arrival: constant, duration_s: 0.4}\n");
  zmq::context_t& ctx = run.ctx();
  // Two squatters (bare DEALERs) say hello first and keep repeating it, never answering a ping.
  std::vector<std::unique_ptr<zmq::socket_t>> squatters;
  auto squat_hellos = [&] {
    for (size_t i = 0; i < squatters.size(); ++i) {
      const std::string bytes = proto::encode(
          proto::Hello{proto::kProtocolVersion, "squatter-" + std::to_string(i), "squat-host", 1});
      (void)squatters[i]->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    }
  };
  for (int i = 0; i < 2; ++i) {
    auto s = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::dealer);
    s->set(zmq::sockopt::routing_id, "squatter-" + std::to_string(i));
    s->set(zmq::sockopt::linger, 0);
    s->connect(run.endpoint());
    squatters.push_back(std::move(s));
  }
  squat_hellos();
  FakeWorker a(ctx, run.endpoint(), "real-a");
  FakeWorker b(ctx, run.endpoint(), "real-b");
  a.hello();
  b.hello();
  int64_t last_squat_ns = steady_ns();
  REQUIRE(pump({&a, &b}, 30, [&] {
    if (steady_ns() - last_squat_ns > 5'000'000) {  // a hello every 5 ms from each squatter
      squat_hellos();
      last_squat_ns = steady_ns();
    }
    return run.done();
  }));
  CHECK(run.rc() == 0);
  CHECK_FALSE(a.rejected);
  CHECK_FALSE(b.rejected);
  CHECK(a.completed > 0);
  CHECK(b.completed > 0);
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  std::set<std::string> ids;
  for (const auto& w : summary["workers"].GetArray()) ids.insert(w["worker_id"].GetString());
  CHECK(ids == std::set<std::string>{"real-a", "real-b"});
  // The squatters were sent pings and nothing else: no Welcome, no token.
  for (auto& s : squatters) {
    for (int i = 0; i < 10000; ++i) {
      zmq::message_t msg;
      if (!s->recv(msg, zmq::recv_flags::dontwait)) break;
      auto d = proto::decode(msg.data(), msg.size(), nullptr);
      REQUIRE(d.has_value());
      CHECK(d->type != proto::MsgType::kWelcome);
    }
  }
}

TEST_CASE("controller protocol: conversations a worker could not decode fail and the run ends") {
  ControllerRun run("undecodable", 1,
                    dataset_yaml(24, 2) + "load: {mode: concurrency, concurrency: 6}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker w(ctx, run.endpoint(), "picky");
  w.fail_index_multiple = 5;                       // by index: 0, 5, 10, ...
  w.unreadable_positions_of_first_batch = {1, 3};  // by position in the first batch
  w.hello();
  REQUIRE(pump({&w}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  REQUIRE_FALSE(w.failed_ids.empty());
  CHECK(w.completed + static_cast<int>(w.failed_ids.size()) == 24);

  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  const auto& r = summary["run"];
  CHECK(string_set(r["failed_conversations"]) == w.failed_ids);
  CHECK(r["failed_conversation_count"].GetInt64() == static_cast<int64_t>(w.failed_ids.size()));
  CHECK(r["unfinished_conversation_count"].GetInt64() == 0);
  CHECK(std::string(summary["verdict"]["status"].GetString()) == "warn");
  auto by_conversation = record_workers(run.out() / "records.jsonl");
  for (const auto& id : w.failed_ids) CHECK_MESSAGE(by_conversation.count(id) == 0, id);
  CHECK(by_conversation.size() == static_cast<size_t>(w.completed));
}

TEST_CASE("controller protocol: each worker's clock offset is re-checked during the run") {
  // A re-check every 100 ms (4 heartbeats) over a 0.5 s measure: several pings beyond the
  // registration's, whatever second of the clock the run falls in.
  ControllerRun run("recheck", 1,
                    dataset_yaml(20, 1) +
                        "load: {mode: rate, rate: 20, arrival: constant,"
                        " concurrency: 100000, duration_s: 0.5, grace_s: 0.1}\n");
  zmq::context_t& ctx = run.ctx();
  FakeWorker w(ctx, run.endpoint(), "pinged");
  w.hello();
  REQUIRE(pump({&w}, 30, [&] { return run.done(); }));
  CHECK(run.rc() == 0);
  CHECK(w.pings >= convoy::controller::kClockPings + 3);
  auto summary = read_json(run.out() / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["workers"][0]["clock_rtt_ns"].GetInt64() >= 0);
}
