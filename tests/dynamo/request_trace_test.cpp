// dataset.type dynamo_trace on a trace the real Dynamo 1.6.1 wrote: convoy drives agent families
// (leads with sub-agents, header mode: X-Dynamo-Session-ID and X-Dynamo-Parent-Session-ID)
// through the real frontend with request tracing on (DYN_REQUEST_TRACE=1, the file sink, which
// writes gzip-compressed segments of enveloped records); convoy then replays that folder on
// convoy-mock and the families come back: the same leads, each sub-agent in its parent's family,
// started after the parent's first turn ended, its parent's next turn after it.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dynamo/dynamo_stack.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// Request tracing on for the stacks started while this lives (the frontend reads it at start).
struct RequestTraceEnv {
  explicit RequestTraceEnv(const fs::path& dir) {
    ::setenv("DYN_REQUEST_TRACE", "1", 1);
    ::setenv("DYN_REQUEST_TRACE_SINKS", "file", 1);
    ::setenv("DYN_REQUEST_TRACE_FILE_PATH", (dir / "trace.jsonl").c_str(), 1);
  }
  ~RequestTraceEnv() {
    ::unsetenv("DYN_REQUEST_TRACE");
    ::unsetenv("DYN_REQUEST_TRACE_SINKS");
    ::unsetenv("DYN_REQUEST_TRACE_FILE_PATH");
  }
  RequestTraceEnv(const RequestTraceEnv&) = delete;
  RequestTraceEnv& operator=(const RequestTraceEnv&) = delete;
};

int run_convoy(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {bin("controller/convoy"), "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  Subprocess run(argv);
  const auto rc = run.wait(180);
  INFO(run.output());
  REQUIRE(rc.has_value());
  return *rc;
}

struct Sent {
  int64_t sent_ns = 0;
  int64_t end_ns = 0;
};

}  // namespace

TEST_CASE("real Dynamo 1.6.1: its request trace replays as the agent families that made it") {
  const fs::path trace_dir = fresh_path("dynamo-request-trace");
  fs::create_directories(trace_dir);
  const fs::path first = fresh_path("dynamo-request-trace-run");
  std::set<std::string> leads;     // correlation ids of the leads convoy sent
  std::set<std::string> children;  // and of their sub-agents
  {
    const RequestTraceEnv env(trace_dir);
    DynamoOptions options;
    options.workers = 2;
    DynamoStack stack(options, "dynamo-request-trace");
    CONVOY_REQUIRE_DYNAMO(stack);
    REQUIRE(run_convoy({src("configs/dynamo-local.yaml"),
                        "-o",
                        first.string(),
                        "--quiet",
                        "--set",
                        "target.url=" + stack.url(),
                        "--set",
                        "output.html=false",
                        "--set",
                        "dataset.conversations=4",
                        "--set",
                        "dataset.turns.mean=3",
                        "--set",
                        "dataset.turns.min=3",
                        "--set",
                        "dataset.turns.max=3",
                        "--set",
                        "dataset.subagents.probability=1",
                        "--set",
                        "dataset.subagents.count.mean=2",
                        "--set",
                        "dataset.subagents.count.stddev=0",
                        "--set",
                        "dataset.subagents.turns.mean=2",
                        "--set",
                        "dataset.subagents.turns.stddev=0",
                        "--set",
                        "dataset.subagents.spawn_after_turn.mean=1",
                        "--set",
                        "dataset.subagents.spawn_after_turn.stddev=0"}) == 0);
    for (const auto& r : read_jsonl(first / "records.jsonl")) {
      REQUIRE(r["http_status"].GetInt() == 200);
      const std::string id = r["x_correlation_id"].GetString();
      (r["subagent"].GetInt() < 0 ? leads : children).insert(id);
    }
  }  // the stack goes down: the sink has written its last segment
  REQUIRE(leads.size() == 4);
  REQUIRE(children.size() == 8);

  const fs::path replay = fresh_path("dynamo-request-trace-replay");
  // The folder as the sink left it, on convoy-mock.
  const fs::path config = fresh_dir("dynamo-request-trace-config") / "replay.yaml";
  std::ofstream(config) << "name: trace-replay\ntarget: {url: mock}\n"
                        << "dataset: {type: dynamo_trace, path: '" << trace_dir.string() << "'}\n"
                        << "load: {mode: concurrency, concurrency: 4}\n"
                        << "session_routing: {mode: header}\nworkers: {local: 2}\n";
  REQUIRE(run_convoy({config.string(), "-o", replay.string(), "--quiet", "--set",
                      "output.html=false"}) == 0);
  // Per family (conversation_index): member (subagent) -> its requests in order.
  std::map<int64_t, std::map<int, std::vector<Sent>>> families;
  std::set<std::string> replayed_leads;
  std::set<std::string> replayed_children;
  for (const auto& r : read_jsonl(replay / "records.jsonl")) {
    const int member = r["subagent"].GetInt();
    const std::string id = r["conversation_id"].GetString();
    (member < 0 ? replayed_leads : replayed_children).insert(id);
    families[r["conversation_index"].GetInt64()][member].push_back(
        Sent{r["sent_ns"].GetInt64(), r["end_ns"].GetInt64()});
  }
  // The trace's sessions are the ids convoy sent as X-Dynamo-Session-ID.
  CHECK(replayed_leads == leads);
  CHECK(replayed_children == children);
  REQUIRE(families.size() == 4);
  for (auto& [index, members] : families) {
    INFO("family " << index);
    REQUIRE(members.size() == 3);  // the lead and its two sub-agents
    auto& lead = members[-1];
    std::sort(lead.begin(), lead.end(),
              [](const Sent& a, const Sent& b) { return a.sent_ns < b.sent_ns; });
    REQUIRE(lead.size() == 3);
    for (int s = 0; s < 2; ++s) {
      auto& sub = members[s];
      REQUIRE(sub.size() == 2);
      const auto first_sent = std::min(sub[0].sent_ns, sub[1].sent_ns);
      const auto last_end = std::max(sub[0].end_ns, sub[1].end_ns);
      CHECK(first_sent >= lead[0].end_ns);  // spawned after the lead's first turn
      CHECK(lead[1].sent_ns >= last_end);   // the lead's next turn waited for it
    }
  }
}
