// Several frontends end to end: target.urls with two convoy-mock processes.
// Both get traffic, no family (a lead and its sub-agents) is split between them, and an
// unreachable URL stops the run before anything is sent, naming it.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

// A config for `urls` (YAML flow list), 24 synthetic families with sub-agents half the time.
std::string multi_url_config(const std::vector<std::string>& urls) {
  std::string list;
  for (const auto& u : urls) list += (list.empty() ? "" : ", ") + ("\"" + u + "\"");
  return "name: e2e-multi-url\n"
         "seed: 11\n"
         "target:\n  urls: [" +
         list +
         "]\n"
         "dataset:\n"
         "  type: synthetic\n"
         "  conversations: 24\n"
         "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
         "  input_tokens: {mean: 32, stddev: 0}\n"
         "  output_tokens: {mean: 4, stddev: 0}\n"
         "  subagents: {probability: 0.5, count: {mean: 2, stddev: 0}, turns: {mean: 1, stddev: "
         "0}, spawn_after_turn: {mean: 1, stddev: 0}}\n"
         "load:\n  mode: concurrency\n  concurrency: 8\n  sessions: 24\n"
         "session_routing:\n  mode: header\n"
         "workers:\n  local: 2\n"
         "output:\n  html: false\n";
}

}  // namespace

TEST_CASE("target.urls: both frontends get traffic and no family is split between them") {
  const fs::path dir = fresh_dir("e2e-multi-url");
  const fs::path log_a = dir / "a.jsonl";
  const fs::path log_b = dir / "b.jsonl";
  Subprocess mock_a({bin("mock/convoy-mock"), "--port", "0", "--speedup", "50", "--contract",
                     "header", "--log-requests", log_a.string()});
  Subprocess mock_b({bin("mock/convoy-mock"), "--port", "0", "--speedup", "50", "--contract",
                     "header", "--log-requests", log_b.string()});
  const std::string url_a = mock_url(mock_a);
  const std::string url_b = mock_url(mock_b);
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << multi_url_config({url_a, url_b});
  Subprocess run(
      {bin("controller/convoy"), "run", cfg.string(), "-o", (dir / "out").string(), "--quiet"});
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
  mock_a.signal(SIGTERM);
  mock_b.signal(SIGTERM);
  REQUIRE(mock_a.wait(30).has_value());
  REQUIRE(mock_b.wait(30).has_value());

  // Each session id, and the family (the root's id) it belongs to, per frontend.
  std::map<std::string, std::set<char>> frontends_of_family;
  std::map<char, int> requests;
  int children = 0;
  for (const auto& [name, log] : {std::pair{'a', log_a}, std::pair{'b', log_b}}) {
    for (const auto& line : read_jsonl(log)) {
      const std::string session = logged_header(line, "x-dynamo-session-id");
      if (session.empty()) continue;
      ++requests[name];
      const std::string parent = logged_header(line, "x-dynamo-parent-session-id");
      if (!parent.empty()) ++children;
      // Synthetic sub-agents are one generation deep: the parent is the root.
      frontends_of_family[parent.empty() ? session : parent].insert(name);
    }
  }
  INFO("requests a=" << requests['a'] << " b=" << requests['b'] << " child requests=" << children);
  CHECK(requests['a'] > 0);
  CHECK(requests['b'] > 0);
  CHECK(children > 0);
  CHECK(frontends_of_family.size() == 24);
  for (const auto& [family, frontends] : frontends_of_family) {
    CHECK_MESSAGE(frontends.size() == 1, family);
  }
  fs::remove_all(dir);
}

TEST_CASE("target.urls: an unreachable frontend stops the run at start and is named") {
  const fs::path dir = fresh_dir("e2e-multi-url-down");
  const fs::path log = dir / "up.jsonl";
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--log-requests", log.string()});
  const std::string up = mock_url(mock);
  const RefusingPort down;
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << multi_url_config({up, down.url()});
  Subprocess run(
      {bin("controller/convoy"), "run", cfg.string(), "-o", (dir / "out").string(), "--quiet"});
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  CHECK(run.output().find("target.urls[1] " + down.url()) != std::string::npos);
  CHECK(run.output().find("target.urls[0]") == std::string::npos);
  mock.signal(SIGTERM);
  REQUIRE(mock.wait(30).has_value());
  // Nothing was sent: the healthy frontend saw no generation request.
  int generations = 0;
  for (const auto& line : read_jsonl(log)) {
    if (!logged_header(line, "x-dynamo-session-id").empty()) ++generations;
  }
  CHECK(generations == 0);
  fs::remove_all(dir);
}
