// End to end, real binaries: a worker SIGKILLed mid-run is declared lost and the run completes
// without splitting any conversation across workers; a worker whose controller goes silent
// cancels its transfers and exits by itself.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <zmq.hpp>

#include "common/zmq_util.hpp"
#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "proto/envelope.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
namespace proto = convoy::proto;
using namespace convoy::test;

namespace {

using Clock = std::chrono::steady_clock;

// The direct children of `pid` (every thread's children list).
std::set<pid_t> children_of(pid_t pid) {
  std::set<pid_t> out;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::istringstream in(read_file(task.path() / "children"));
    pid_t child = 0;
    while (in >> child) out.insert(child);
  }
  return out;
}

std::string cmdline_of(pid_t pid) {
  std::string raw = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  return raw;
}

}  // namespace

TEST_CASE("a worker killed mid-run is reported lost and no conversation is split") {
  fs::path out = fresh_path("e2e-worker-loss");
  // ~1 s conversations (3 turns of ~32 tokens at 10 ms), 12 at a time over 3 workers, 120 in
  // all: the run lasts long enough for the loss to be detected (3 s) while work remains.
  std::vector<std::string> argv =
      quickstart_run_argv(out, {"workers.local=3", "mock.itl_ms=10", "dataset.conversations=120",
                                "load.concurrency=12", "load.grace_s=5"});
  std::erase(argv, std::string("--quiet"));  // -q would silence "measuring: " (an info line)
  Subprocess run(argv);

  // The three convoy-worker children: measuring starts once all of them have registered.
  REQUIRE_MESSAGE(run.wait_for_output("measuring: ", 60), run.output());
  std::set<pid_t> workers;
  for (pid_t child : children_of(run.pid())) {
    if (cmdline_of(child).find("convoy-worker") != std::string::npos) workers.insert(child);
  }
  INFO(run.output());
  REQUIRE(workers.size() == 3);

  // Records flowing: the run is well under way.
  const bool flowing = wait_for_change(
      out,
      [&] {
        std::error_code ec;
        const auto bytes = fs::file_size(out / "records.jsonl", ec);
        return !ec && bytes > 2000;  // (a file not there yet is size -1 with ec set)
      },
      30);
  REQUIRE(flowing);
  const pid_t victim = *workers.begin();
  REQUIRE(::kill(victim, SIGKILL) == 0);

  auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK((*rc == 0 || *rc == 1));

  auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());

  // The victim's id, from its pid; every other worker finished normally.
  std::string victim_id;
  for (const auto& w : summary["workers"].GetArray()) {
    if (w["pid"].GetInt64() == victim) {
      victim_id = w["worker_id"].GetString();
      CHECK(std::string(w["state"].GetString()) == "lost");
    } else {
      CHECK(std::string(w["state"].GetString()) != "lost");
    }
    CHECK_FALSE(process_alive(w["pid"].GetInt64()));
  }
  REQUIRE_FALSE(victim_id.empty());
  const auto& r = summary["run"];
  REQUIRE(r["lost_workers"].Size() == 1);
  CHECK(std::string(r["lost_workers"][0].GetString()) == victim_id);
  CHECK_FALSE(r["incomplete"].GetBool());

  // It had conversations in flight (12 over 3 workers): reported by correlation id.
  std::set<std::string> lost;
  for (const auto& id : r["lost_conversations"].GetArray()) lost.insert(id.GetString());
  CHECK(r["lost_conversation_count"].GetInt64() == static_cast<int64_t>(lost.size()));
  CHECK_FALSE(lost.empty());
  for (const auto& id : lost) CHECK_MESSAGE(id.size() == 36, id);  // uuid4 text

  // For every correlation id, all its records share one worker; a lost conversation's records
  // (if any turn finished before the kill) are all the victim's.
  std::map<std::string, std::set<std::string>> workers_of;
  const auto records = read_jsonl(out / "records.jsonl");
  for (const auto& d : records) {
    workers_of[d["x_correlation_id"].GetString()].insert(d["worker_id"].GetString());
  }
  CHECK(records.size() > 0);
  for (const auto& [id, ws] : workers_of) {
    CHECK_MESSAGE(ws.size() == 1, id);
    if (lost.count(id)) CHECK(ws == std::set<std::string>{victim_id});
  }
  // The survivors finished the rest: far more conversations have records than were lost.
  CHECK(workers_of.size() > lost.size());
  fs::remove_all(out);
}

TEST_CASE("a worker whose controller goes silent cancels its transfers and exits with 3") {
  LoopbackListener target;
  zmq::context_t ctx;
  zmq::socket_t router(ctx, zmq::socket_type::router);
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  convoy::configure_socket(router, 0);
  convoy::configure_socket(pull, 0);
  router.bind("tcp://127.0.0.1:0");
  pull.bind("tcp://127.0.0.1:0");
  const std::string control = convoy::last_endpoint(router);
  const std::string results = convoy::last_endpoint(pull);

  Subprocess worker({bin("worker/convoy-worker"), "--connect", control, "--id", "orphan"});

  // Hello: answer it with a Welcome, then assign one conversation the target never answers.
  zmq::pollitem_t ctl_item{router.handle(), 0, ZMQ_POLLIN, 0};
  std::optional<std::string> hello_from;
  for (int i = 0; i < 200 && !hello_from; ++i) {
    if (zmq::poll(&ctl_item, 1, std::chrono::milliseconds(50)) == 0) continue;
    zmq::message_t identity;
    zmq::message_t payload;
    REQUIRE(router.recv(identity));
    REQUIRE(router.recv(payload));
    auto d = proto::decode(payload.data(), payload.size(), nullptr);
    if (d && d->type == proto::MsgType::kHello) hello_from = identity.to_string();
  }
  INFO(worker.output());
  REQUIRE(hello_from.has_value());
  CHECK(*hello_from == "orphan");

  auto send = [&](const std::string& bytes) {
    router.send(zmq::buffer(*hello_from), zmq::send_flags::sndmore);
    router.send(zmq::buffer(bytes));
  };
  proto::Welcome welcome;
  welcome.run_id = "silence-test";
  welcome.results_endpoint = results;
  welcome.settings.url = target.url();
  welcome.settings.endpoint = convoy::proto::Endpoint::kChat;
  send(proto::encode(welcome));
  proto::Conversation c;
  c.index = 0;
  c.conversation_id = "conv-0";
  c.correlation_id = "5f0c8a5e-1111-4222-8333-444455556666";
  c.start_ns = 0;  // already due
  proto::Turn turn;
  turn.user_text = "hello?";
  turn.max_tokens = 8;
  c.turns.push_back(turn);
  proto::Assign assign;
  assign.batch = 1;
  assign.conversations.push_back(c);
  send(proto::encode(assign));
  const auto silent_since = Clock::now();

  // From here on the controller says nothing. The worker must give up on its own.
  auto rc = worker.wait(15);
  const double waited_s = std::chrono::duration<double>(Clock::now() - silent_since).count();
  INFO(worker.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(waited_s >= 4.5);  // it waited for the 5 s of silence...
  CHECK(waited_s < 6.0);   // ...then stopped at once (7 s before the fix; load allows slack)
  CHECK(worker.output().find("no word from the controller") != std::string::npos);

  // What it flushed on the way out: the cancelled request, its conversation's end, and a Bye.
  bool cancelled_record = false;
  bool ended = false;
  bool bye = false;
  zmq::pollitem_t res_item{pull.handle(), 0, ZMQ_POLLIN, 0};
  for (int i = 0; i < 100 && !bye; ++i) {
    if (zmq::poll(&res_item, 1, std::chrono::milliseconds(20)) == 0) continue;
    zmq::message_t msg;
    REQUIRE(pull.recv(msg));
    auto d = proto::decode(msg.data(), msg.size(), nullptr);
    REQUIRE(d.has_value());
    if (d->type == proto::MsgType::kBye) {
      bye = true;
    } else if (auto batch = d->as<proto::Results>()) {
      for (const auto& r : batch->records) {
        if (r.x_correlation_id == c.correlation_id &&
            r.error.kind == proto::ErrorKind::kCancelled) {
          cancelled_record = true;
        }
      }
      for (const auto& e : batch->ended) ended = ended || e.conversation_index == 0;
    }
  }
  CHECK(cancelled_record);
  CHECK(ended);
  CHECK(bye);
}
