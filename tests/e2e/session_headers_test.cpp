// Dynamo's session headers end to end against a real convoy-mock: the exact
// session headers of every request for each session_routing.final_marker, read from the mock's
// request log; and session_routing.verify counting the conversations that moved between mock
// workers: none with an affinity TTL, nearly all without one.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

struct Seen {
  std::string final_header;  // X-Dynamo-Session-Final as sent ("" when absent)
  int64_t max_tokens = -1;
};

// Runs 4 conversations of exactly 3 turns in header mode against `url`; returns the exit code.
int run_header_mode(const std::string& url, const fs::path& out,
                    const std::vector<std::string>& extra) {
  std::vector<std::string> argv = quickstart_run_argv(
      out, {"target.url=" + url, "dataset.conversations=4", "dataset.turns.mean=3",
            "dataset.turns.stddev=0", "session_routing.mode=header", "output.html=false"});
  argv.insert(argv.end(), extra.begin(), extra.end());
  Subprocess run(argv);
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  return *rc;
}

}  // namespace

TEST_CASE(
    "header mode: the mock sees the exact session headers of each turn for every final_marker") {
  for (const std::string marker : {"off", "last_turn", "close_request"}) {
    INFO("final_marker " << marker);
    const fs::path dir = fresh_dir("e2e-final-" + marker);
    const fs::path log = dir / "requests.jsonl";
    Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "20", "--contract",
                     "header", "--log-requests", log.string()});
    const std::string url = mock_url(mock);
    REQUIRE(run_header_mode(url, dir / "out",
                            {"--set", "session_routing.final_marker=" + marker}) == 0);
    mock.signal(SIGTERM);
    REQUIRE(mock.wait(30).has_value());

    // Per session, in the order the mock received them.
    std::map<std::string, std::vector<Seen>> sessions;
    for (const auto& line : read_jsonl(log)) {
      if (!line.HasMember("body") || !line["body"].IsObject()) continue;  // not a generation
      const std::string id = logged_header(line, "X-Dynamo-Session-ID");
      REQUIRE_FALSE(id.empty());
      CHECK(logged_header(line, "X-Correlation-ID") == id);
      CHECK(logged_header(line, "X-Dynamo-Parent-Session-ID").empty());  // no sub-agents here
      CHECK_FALSE(line["body"].HasMember("nvext"));  // no agent_context, no body control
      Seen s;
      s.final_header = logged_header(line, "X-Dynamo-Session-Final");
      if (line["body"].HasMember("max_tokens"))
        s.max_tokens = line["body"]["max_tokens"].GetInt64();
      sessions[id].push_back(s);
    }
    REQUIRE(sessions.size() == 4);
    for (const auto& entry : sessions) {
      const std::string& id = entry.first;
      const std::vector<Seen>& seen = entry.second;
      INFO("session " << id);
      if (marker == "off") {
        REQUIRE(seen.size() == 3);
        for (const Seen& s : seen) CHECK(s.final_header.empty());
      } else if (marker == "last_turn") {
        REQUIRE(seen.size() == 3);
        CHECK(seen[0].final_header.empty());
        CHECK(seen[1].final_header.empty());
        CHECK(seen[2].final_header == "true");
      } else {
        REQUIRE(seen.size() == 4);  // three turns, then the one-token close request
        for (size_t i = 0; i < 3; ++i) CHECK(seen[i].final_header.empty());
        CHECK(seen[3].final_header == "true");
        CHECK(seen[3].max_tokens == 1);
      }
    }
    // The close requests are counted apart and kept out of every metric.
    const auto summary = read_json(dir / "out" / "summary.json");
    REQUIRE_FALSE(summary.HasParseError());
    CHECK(summary["request_count"]["avg"].GetDouble() == 12);
    CHECK(summary["run"]["close_requests"].GetInt64() == (marker == "close_request" ? 4 : 0));
  }
}

TEST_CASE("verify: no conversation moves with an affinity TTL, nearly all move without one") {
  for (const bool ttl : {true, false}) {
    const std::string what = ttl ? "with --affinity-ttl-s" : "without an affinity TTL";
    INFO(what);
    const fs::path dir = fresh_dir(ttl ? "e2e-verify-ttl" : "e2e-verify-nottl");
    std::vector<std::string> mock_args = {bin("mock/convoy-mock"),
                                          "--port",
                                          "0",
                                          "--speedup",
                                          "20",
                                          "--contract",
                                          "header",
                                          "--workers",
                                          "8",
                                          "--router-mode",
                                          "random"};
    if (ttl) mock_args.insert(mock_args.end(), {"--affinity-ttl-s", "60"});
    Subprocess mock(mock_args);
    const std::string url = mock_url(mock);
    REQUIRE(run_header_mode(url, dir / "out", {"--set", "session_routing.verify=true"}) == 0);
    mock.signal(SIGTERM);
    REQUIRE(mock.wait(30).has_value());

    const auto summary = read_json(dir / "out" / "summary.json");
    REQUIRE_FALSE(summary.HasParseError());
    REQUIRE(summary.HasMember("affinity"));
    const auto& a = summary["affinity"];
    CHECK(a["verified"].GetBool());
    CHECK(a["conversations"].GetInt64() == 4);
    CHECK(a["requests_without_worker"].GetInt64() == 0);
    if (ttl) {
      CHECK(a["conversations_moved"].GetInt64() == 0);
      CHECK(a["moves"].GetInt64() == 0);
    } else {
      // 8 workers picked at random: a turn stays with probability 1/8. All 4 conversations
      // staying put on both later turns has probability (1/64)^4.
      CHECK(a["conversations_moved"].GetInt64() >= 3);
      CHECK(a["moves"].GetInt64() >= 4);
    }
    // Every record names the mock worker that served it.
    for (const auto& r : read_jsonl(dir / "out" / "records.jsonl")) {
      CHECK_FALSE(std::string(r["served_by"].GetString()).empty());
    }
  }
}
