// End to end across hosts built from network namespaces: `convoy controller` on one
// host, two `convoy-worker`s on two others, `convoy-mock` on a fourth, all joined by a bridge in a
// fifth namespace that has no link to the machine's own network. Needs root; skips otherwise.
//
// Which host a record came from: namespaces share the machine's hostname (the UTS namespace), so
// each worker runs in a UTS namespace of its own with a distinct hostname (unshare --uts) and a
// distinct --id. The records' `host` field is then the hostname of the namespace the worker
// really ran in, and the checks hold on both `worker_id` and `host`.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "e2e/netns_lab.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// A private /24 that exists only inside the lab's namespaces.
const std::string kControllerAddr = "10.213.0.1";
const std::array<std::string, 2> kWorkerAddrs = {"10.213.0.2", "10.213.0.3"};
const std::string kMockAddr = "10.213.0.4";
const std::string kControlEndpoint = "tcp://" + kControllerAddr + ":5555";
const std::string kResultsEndpoint = "tcp://" + kControllerAddr + ":5556";  // results_listen
const std::string kMockUrl = "http://" + kMockAddr + ":8000";

struct RunShape {
  int conversations = 0;
  int turns = 0;
  int output_tokens = 0;
  int concurrency = 0;
  std::string itl_ms;  // the mock's decode time per token
};

// The lab's hosts and the processes on them. Members are destroyed in reverse order: every
// process is killed before the namespaces it runs in are deleted.
struct MultiHost {
  explicit MultiHost(const std::string& tag) : lab(tag), dir(fresh_dir("e2e-netns-" + tag)) {
    hostnames = {"convoy-" + tag + "-host-a", "convoy-" + tag + "-host-b"};
    ids = {"ns-" + tag + "-a", "ns-" + tag + "-b"};
    controller_ns = lab.add_host("ctl", kControllerAddr + "/24");
    worker_ns[0] = lab.add_host("w0", kWorkerAddrs[0] + "/24");
    worker_ns[1] = lab.add_host("w1", kWorkerAddrs[1] + "/24");
    mock_ns = lab.add_host("mock", kMockAddr + "/24");
    if (!lab.error().empty()) return;
    // unshare --uts needs CAP_SYS_ADMIN too; probe it before relying on it.
    auto probe = NetnsLab::run(lab.on_host(worker_ns[0], "probe", {"/bin/true"}));
    if (probe.rc != 0) skip_reason = "unshare --uts failed: " + probe.output;
  }
  ~MultiHost() {
    for (auto& w : workers) w.reset();
    controller.reset();
    mock.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  // Empty when the lab is up; else why the test is skipped.
  std::string skipped() const { return lab.error().empty() ? skip_reason : lab.error(); }

  void start(const RunShape& shape) {
    mock.emplace(
        lab.in(mock_ns, {bin("mock/convoy-mock"), "--host", kMockAddr, "--port", "8000",
                         "--contract", "bind", "--workers", "4", "--itl-ms", shape.itl_ms}));
    REQUIRE_MESSAGE(mock->wait_for_output("convoy-mock listening on " + kMockUrl, 30),
                    mock->output());

    const fs::path cfg = dir / "config.yaml";
    std::ofstream(cfg) << "name: e2e-netns\n"
                       << "seed: 11\n"
                       << "target:\n  url: " << kMockUrl << "\n"
                       << "dataset:\n  type: synthetic\n"
                       << "  conversations: " << shape.conversations << "\n"
                       << "  turns: {mean: " << shape.turns << ", stddev: 0, min: " << shape.turns
                       << ", max: " << shape.turns << "}\n"
                       << "  input_tokens: {mean: 64, stddev: 0}\n"
                       << "  output_tokens: {mean: " << shape.output_tokens << ", stddev: 0}\n"
                       << "load:\n  mode: concurrency\n  concurrency: " << shape.concurrency
                       << "\n  grace_s: 5\n"
                       << "session_routing:\n  mode: bind\n  timeout_s: 60\n"
                       << "workers:\n  local: 0\n  expect: 2\n  listen: " << kControlEndpoint
                       << "\n  results_listen: " << kResultsEndpoint << "\n  ready_timeout_s: 30\n"
                       << "output:\n  html: false\n";
    controller.emplace(lab.in(controller_ns, {bin("controller/convoy"), "controller", cfg.string(),
                                              "-o", out().string()}));
    const std::string listening =
        "controller listening on " + kControlEndpoint + " (results " + kResultsEndpoint + ")";
    REQUIRE_MESSAGE(controller->wait_for_output(listening, 30), controller->output());
    for (size_t i = 0; i < 2; ++i) {
      workers[i].emplace(lab.on_host(worker_ns[i], hostnames[i],
                                     {bin("worker/convoy-worker"), "--connect", kControlEndpoint,
                                      "--id", ids[i], "--wait-s", "30"}));
    }
  }

  fs::path out() const { return dir / "out"; }

  // One round of reading every process's output (a full pipe would block a chatty worker).
  void drain() {
    (void)controller->wait(0);
    for (auto& w : workers) {
      if (w) (void)w->wait(0);
    }
  }

  // Waits for the controller to exit, draining the workers meanwhile; nullopt on timeout.
  std::optional<int> wait_controller(double timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      drain();
      if (auto rc = controller->wait(0)) return rc;
    }
    return std::nullopt;
  }

  NetnsLab lab;
  fs::path dir;
  std::array<std::string, 2> hostnames;
  std::array<std::string, 2> ids;
  std::string controller_ns;
  std::array<std::string, 2> worker_ns;
  std::string mock_ns;
  std::string skip_reason;
  std::optional<Subprocess> mock;
  std::optional<Subprocess> controller;
  std::array<std::optional<Subprocess>, 2> workers;
};

struct Records {
  size_t lines = 0;
  std::map<std::string, std::set<std::string>> workers_of;  // correlation id -> worker ids
  std::map<std::string, std::set<std::string>> hosts_of;    // worker id -> hosts
  std::map<std::string, std::vector<std::string>> actions;  // correlation id -> by turn
  size_t errors = 0;
};

Records read_records(const fs::path& path) {
  Records out;
  std::map<std::string, std::map<int64_t, std::string>> by_turn;
  for (const auto& d : read_jsonl(path)) {
    const std::string id = d["x_correlation_id"].GetString();
    const std::string worker = d["worker_id"].GetString();
    out.workers_of[id].insert(worker);
    out.hosts_of[worker].insert(d["host"].GetString());
    const auto& sc = d["session_control"];
    by_turn[id][d["turn_index"].GetInt64()] =
        sc.IsObject() && sc.HasMember("action") ? sc["action"].GetString() : "-";
    if (d.HasMember("error") && d["error"].IsObject()) ++out.errors;
    ++out.lines;
  }
  for (const auto& [id, turns] : by_turn) {
    for (const auto& [turn, action] : turns) out.actions[id].push_back(action);
  }
  return out;
}

rapidjson::Document read_summary(const fs::path& out) {
  auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  return summary;
}

}  // namespace

TEST_CASE("multi-host: a bind run over two worker hosts keeps each conversation on one worker") {
  MultiHost m("bind");
  if (!m.skipped().empty()) {
    MESSAGE("skipped: " << m.skipped());
    return;
  }
  const RunShape shape{16, 3, 8, 8, "2"};
  m.start(shape);
  auto rc = m.wait_controller(120);
  INFO(m.controller->output());
  INFO(m.workers[0]->output());
  INFO(m.workers[1]->output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  // workers.listen is not loopback and no keys are set: the controller says so.
  CHECK(m.controller->output().find("is not a loopback address") != std::string::npos);

  const Records r = read_records(m.out() / "records.jsonl");
  CHECK(r.lines == static_cast<size_t>(shape.conversations * shape.turns));
  CHECK(r.errors == 0);
  CHECK(r.workers_of.size() == static_cast<size_t>(shape.conversations));
  for (const auto& [id, workers] : r.workers_of) CHECK_MESSAGE(workers.size() == 1, id);
  const std::vector<std::string> bind_bind_close = {"bind", "bind", "close"};
  for (const auto& [id, actions] : r.actions) CHECK_MESSAGE(actions == bind_bind_close, id);

  // Both workers ran conversations, each on its own host.
  REQUIRE(r.hosts_of.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    REQUIRE(r.hosts_of.count(m.ids[i]) == 1);
    CHECK(r.hosts_of.at(m.ids[i]) == std::set<std::string>{m.hostnames[i]});
  }
  const rapidjson::Document summary = read_summary(m.out());
  REQUIRE(summary["workers"].Size() == 2);
  std::map<std::string, std::string> host_of;
  for (const auto& w : summary["workers"].GetArray()) {
    host_of[w["worker_id"].GetString()] = w["host"].GetString();
  }
  CHECK(host_of ==
        std::map<std::string, std::string>{{m.ids[0], m.hostnames[0]}, {m.ids[1], m.hostnames[1]}});
  for (auto& w : m.workers) CHECK(w->wait(30) == 0);
}

TEST_CASE("multi-host: a worker whose link is cut mid-run is lost and nothing is split") {
  MultiHost m("cut");
  if (!m.skipped().empty()) {
    MESSAGE("skipped: " << m.skipped());
    return;
  }
  // ~1 s conversations (3 turns of 32 tokens at 10 ms), 12 at a time over 2 workers: when the
  // cable is pulled each worker has several in flight and plenty remain for the survivor.
  const RunShape shape{60, 3, 32, 12, "10"};
  m.start(shape);

  bool flowing = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!flowing && std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    const auto bytes = fs::file_size(m.out() / "records.jsonl", ec);
    flowing = !ec && bytes > 4000;  // (a file not there yet is size -1 with ec set)
    if (!flowing) m.drain();
  }
  INFO(m.controller->output());
  INFO(m.workers[0]->output());
  INFO(m.workers[1]->output());
  REQUIRE(flowing);
  const std::string victim = m.ids[1];
  const auto cut = m.lab.link_down(m.worker_ns[1]);
  REQUIRE_MESSAGE(cut.rc == 0, cut.output);

  auto rc = m.wait_controller(120);
  INFO(m.controller->output());
  REQUIRE(rc.has_value());
  CHECK((*rc == 0 || *rc == 1));  // completed; not 3

  const rapidjson::Document summary = read_summary(m.out());
  const auto& run = summary["run"];
  REQUIRE(run["lost_workers"].Size() == 1);
  CHECK(std::string(run["lost_workers"][0].GetString()) == victim);
  CHECK_FALSE(run["incomplete"].GetBool());
  for (const auto& w : summary["workers"].GetArray()) {
    const bool lost = std::string(w["state"].GetString()) == "lost";
    CHECK(lost == (std::string(w["worker_id"].GetString()) == victim));
  }
  std::set<std::string> lost;
  for (const auto& id : run["lost_conversations"].GetArray()) lost.insert(id.GetString());
  CHECK(run["lost_conversation_count"].GetInt64() == static_cast<int64_t>(lost.size()));
  CHECK_FALSE(lost.empty());

  // No conversation's records are split across workers; a lost one's are all the victim's.
  const Records r = read_records(m.out() / "records.jsonl");
  CHECK(r.lines > 0);
  for (const auto& [id, workers] : r.workers_of) {
    CHECK_MESSAGE(workers.size() == 1, id);
    if (lost.count(id)) CHECK(workers == std::set<std::string>{victim});
  }
  CHECK(r.workers_of.size() > lost.size());
  MESSAGE("cut " << victim << ": exit " << *rc << ", " << lost.size() << " conversation(s) lost, "
                 << r.workers_of.size() << " with records, " << r.lines << " records");
  REQUIRE(r.hosts_of.count(m.ids[0]) == 1);
  CHECK(r.hosts_of.at(m.ids[0]) == std::set<std::string>{m.hostnames[0]});

  // The survivor finished normally; the cut-off worker gave up on the silent controller.
  CHECK(m.workers[0]->wait(30) == 0);
  auto victim_rc = m.workers[1]->wait(30);
  INFO(m.workers[1]->output());
  REQUIRE(victim_rc.has_value());
  CHECK(*victim_rc == 3);
}
