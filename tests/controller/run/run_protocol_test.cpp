// The real controller run loop (run_benchmark on a thread) against fake workers that speak the
// wire protocol: registration, version checks, sharding, results, malformed input, worker loss.
// Over inproc:// on one zmq context, with a 25 ms heartbeat and 4 misses before a worker is
// lost (RunSeams), so each case takes a fraction of a second.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "common/log.hpp"
#include "controller/run/registry.hpp"
#include "controller/run/run.hpp"
#include "controller/run/sharding.hpp"
#include "fake_worker.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
namespace proto = convoy::proto;
using namespace convoy::test;

namespace {

// correlation id -> worker ids of its records.
std::map<std::string, std::set<std::string>> record_workers(const fs::path& path,
                                                            size_t* lines = nullptr) {
  std::map<std::string, std::set<std::string>> out;
  const auto records = read_jsonl(path);
  for (const auto& d : records) {
    out[d["x_correlation_id"].GetString()].insert(d["worker_id"].GetString());
  }
  if (lines) *lines = records.size();
  return out;
}

std::set<std::string> string_set(const rapidjson::Value& array) {
  std::set<std::string> out;
  for (const auto& v : array.GetArray()) out.insert(v.GetString());
  return out;
}

// Captures this process's stderr (where the log goes) into a file while alive.
class StderrCapture {
 public:
  explicit StderrCapture(fs::path path) : path_(std::move(path)) {
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
  fs::path path_;
  int saved_ = -1;
};

constexpr int64_t kTestHeartbeatNs = 25'000'000;
constexpr int kTestMissedHeartbeats = 4;  // lost after 100 ms of silence

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
    fs::remove_all(out_);
  }
  ControllerRun(const ControllerRun&) = delete;
  ControllerRun& operator=(const ControllerRun&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  zmq::context_t& ctx() { return ctx_; }
  const fs::path& out() const { return out_; }
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
  fs::path out_;
  std::string endpoint_;
  convoy::controller::RunOptions options_;
  convoy::controller::RunSeams seams_;
  std::thread thread_;
  std::atomic<bool> done_{false};
  int rc_ = -1;
  std::string error_;
};

// A small synthetic dataset with a fixed number of turns per conversation.
std::string dataset_yaml(int conversations, int turns) {
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

}  // namespace

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
