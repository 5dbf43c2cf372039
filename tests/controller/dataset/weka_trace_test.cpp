// dataset.type weka_trace: Weka agent traces (written here from the documented shape of AIPerf's
// weka_trace_models.py: one JSON object per session, calls and sub-agent markers) mapped to
// Mooncake rows: AIPerf's end-to-start delays, the input each call adds, block ids scoped to the
// trace, sub-agents spawned after the lead's call before their marker, and every malformed trace
// named by file and key path.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "controller/dataset/dataset.hpp"
#include "controller/dataset/weka_trace.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace weka_trace_test {

// A call: `t` and `extra` are JSON text (extra starts with ", " when given).
std::string weka_call(const std::string& t, int64_t in, int64_t out, const std::string& extra = "",
                      const std::string& type = "n") {
  return R"({"t": )" + t + R"(, "type": ")" + type + R"(", "model": "m", "in": )" +
         std::to_string(in) + R"(, "out": )" + std::to_string(out) + extra + "}";
}

std::string weka_subagent(const std::string& t, const std::string& agent,
                          const std::string& calls) {
  return R"({"t": )" + t + R"(, "type": "subagent", "agent_id": ")" + agent +
         R"(", "subagent_type": "Explore", "status": "completed", "models": ["m"], )"
         R"("requests": [)" +
         calls + "]}";
}

std::string weka_trace(const std::string& id, const std::string& requests, int block = 4,
                       const std::string& extra = "") {
  return R"({"id": ")" + id + R"(", "models": ["m"], "block_size": )" + std::to_string(block) +
         R"(, "hash_id_scope": "local", "requests": [)" + requests + "]" + extra + "}";
}

// A lead of three calls with two sub-agents after its first: a1's first call has a time
// relative to its marker (0.1 -> 1.3 s), its second an absolute one.
std::string lead_with_subagents() {
  return weka_trace(
      "L", weka_call("0", 8, 4, R"(, "hash_ids": [1, 2], "api_time": 1.0)") + ", " +
               weka_subagent("1.2", "a1",
                             weka_call("0.1", 6, 2, R"(, "hash_ids": [1, 9], "api_time": 0.5)") +
                                 ", " + weka_call("2.0", 10, 3, "", "s")) +
               ", " + weka_subagent("1.2", "a2", weka_call("1.25", 5, 1)) + ", " +
               weka_call("3.5", 20, 5, R"(, "api_time": 0.25, "stop": "tool_use")") + ", " +
               weka_call("3.6", 10, 2, R"(, "ttft": 0.1)", "s"));
}

struct WekaRows {
  std::vector<rapidjson::Document> rows;
  WekaTraceStats stats;
};

WekaRows map_weka(const std::vector<std::pair<std::string, std::string>>& traces) {
  WekaTraceMapper mapper;
  std::ostringstream out;
  for (const auto& [source, text] : traces) mapper.map(text, source, out);
  WekaRows r;
  r.stats = mapper.stats();
  std::istringstream lines(out.str());
  std::string line;
  while (std::getline(lines, line)) r.rows.push_back(test::parse_json(line));
  return r;
}

std::string weka_error(const std::vector<std::pair<std::string, std::string>>& traces) {
  return test::error_message<ConfigError>([&] { map_weka(traces); });
}

std::string weka_error_of(const std::string& text) { return weka_error({{"w.json", text}}); }

}  // namespace weka_trace_test

using namespace weka_trace_test;

TEST_CASE("weka_trace: a lead's calls become rows with AIPerf's end-to-start delays") {
  const auto r = map_weka({{"a.json", lead_with_subagents()}});
  REQUIRE(r.rows.size() == 6);
  const auto& first = r.rows[0];
  CHECK(std::string(first["session_id"].GetString()) == "L");
  CHECK(first["timestamp"].GetInt64() == 0);
  CHECK(first["input_length"].GetInt64() == 8);  // the first call keeps its whole input
  CHECK(first["output_length"].GetInt64() == 4);
  REQUIRE(first["hash_ids"].Size() == 2);
  // t 3.5 after a call at 0 that took 1.0 s: 2.5 s idle; the context grew 20 - 8 - 4 tokens.
  CHECK(r.rows[1]["delay"].GetInt64() == 2500);
  CHECK(r.rows[1]["input_length"].GetInt64() == 8);
  CHECK_FALSE(r.rows[1].HasMember("hash_ids"));
  // t 3.6 began before the previous call's end (3.75): no delay. Its context shrank: 1 token.
  CHECK(r.rows[2]["delay"].GetInt64() == 0);
  CHECK(r.rows[2]["input_length"].GetInt64() == 1);
  CHECK(r.stats.not_extending == 1);
  CHECK(r.stats.traces == 1);
  CHECK(r.stats.calls == 6);
  CHECK(r.stats.block_tokens == 4);
}

TEST_CASE("weka_trace: sub-agents after one call are members spawned after that turn") {
  const auto r = map_weka({{"a.json", lead_with_subagents()}});
  REQUIRE(r.rows.size() == 6);
  const auto& a1 = r.rows[3];
  CHECK(std::string(a1["session_id"].GetString()) == "L/a1");
  CHECK(std::string(a1["parent_session_id"].GetString()) == "L");
  CHECK(a1["spawn_after_turn"].GetInt64() == 1);
  CHECK_FALSE(a1.HasMember("timestamp"));
  CHECK(a1["input_length"].GetInt64() == 6);
  // Block ids are the trace's: the lead's local 1 and the sub-agent's local 1 are one block.
  CHECK(a1["hash_ids"][0].GetUint64() == r.rows[0]["hash_ids"][0].GetUint64());
  CHECK(a1["hash_ids"][1].GetUint64() != r.rows[0]["hash_ids"][1].GetUint64());
  // Relative 0.1 (-> 1.3 s) + 0.5 s api_time, then 2.0 s: 0.2 s idle; 10 - 6 - 2 new tokens.
  CHECK(std::string(r.rows[4]["session_id"].GetString()) == "L/a1");
  CHECK(r.rows[4]["delay"].GetInt64() == 200);
  CHECK(r.rows[4]["input_length"].GetInt64() == 2);
  const auto& a2 = r.rows[5];
  CHECK(std::string(a2["session_id"].GetString()) == "L/a2");
  CHECK(std::string(a2["parent_session_id"].GetString()) == "L");
  CHECK(a2["spawn_after_turn"].GetInt64() == 1);  // in parallel with a1
  CHECK(r.stats.subagents == 2);
}

TEST_CASE("weka_trace: block ids are scoped to their trace") {
  const auto r =
      map_weka({{"a.json", weka_trace("A", weka_call("0", 8, 1, R"(, "hash_ids": [1, 2])"))},
                {"b.json", weka_trace("B", weka_call("0", 8, 1, R"(, "hash_ids": [1, 2])"))}});
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0]["hash_ids"][0].GetUint64() != r.rows[1]["hash_ids"][0].GetUint64());
  CHECK(r.rows[0]["hash_ids"][1].GetUint64() != r.rows[1]["hash_ids"][1].GetUint64());
}

TEST_CASE("weka_trace: a marker before the first call is a lead, one without calls is skipped") {
  const auto r =
      map_weka({{"k.json", weka_trace("K", weka_subagent("0", "early", weka_call("0", 4, 1)) +
                                               ", " + weka_subagent("0", "none", "") + ", " +
                                               weka_call("1", 4, 1))}});
  REQUIRE(r.rows.size() == 2);
  CHECK(std::string(r.rows[0]["session_id"].GetString()) == "K");
  CHECK(std::string(r.rows[1]["session_id"].GetString()) == "K/early");
  CHECK(r.rows[1]["timestamp"].GetInt64() == 0);
  CHECK_FALSE(r.rows[1].HasMember("parent_session_id"));
  CHECK(r.stats.early_subagents == 1);
  CHECK(r.stats.empty_subagents == 1);
  CHECK(r.stats.subagents == 0);
}

TEST_CASE("weka_trace: a lead-only trace replays as one conversation") {
  const auto all =
      parse_weka_traces({{"a.json", weka_trace("A", weka_call("0", 8, 4, R"(, "api_time": 0.5)") +
                                                        ", " + weka_call("2", 20, 3))}},
                        Config{});
  REQUIRE(all.size() == 1);
  CHECK(all[0].conversation_id == "A");
  REQUIRE(all[0].turns.size() == 2);
  CHECK(all[0].turns[0].max_tokens == 4);
  CHECK(all[0].turns[1].max_tokens == 3);
  CHECK(all[0].turns[1].delay_ms == doctest::Approx(1500));
  CHECK(all[0].turns[1].input_tokens_est == 8);
}

TEST_CASE("weka_trace: malformed traces name the file and the key path") {
  const std::string ok = weka_call("0", 8, 1);
  CHECK(weka_error_of("{\"id\": ").find("w.json: not JSON: ") == 0);
  CHECK(weka_error_of("[]") == "w.json: expected one JSON object (a Weka trace)");
  CHECK(
      weka_error_of(R"({"models": [], "block_size": 4, "hash_id_scope": "local", "requests": []})")
          .find("w.json: id: is required") == 0);
  CHECK(weka_error_of(R"({"id": 5})").find("w.json: id: expected a string") == 0);
  CHECK(weka_error_of(weka_trace("A", ok, 0)).find("w.json: block_size: 0 is out of range") == 0);
  CHECK(weka_error_of(R"({"id": "A", "models": [], "block_size": 4, "hash_id_scope": "local"})")
            .find("w.json: requests: is required") == 0);
  CHECK(weka_error_of(R"({"id": "A", "models": [], "block_size": 4, "hash_id_scope": "global", )"
                      R"("requests": []})")
            .find("w.json: hash_id_scope: \"global\": only \"local\"") == 0);
  CHECK(weka_error_of(weka_trace("A", ok, 4, R"(, "extra": 1)"))
            .find("w.json: extra: unknown key in a Weka trace") == 0);
  CHECK(weka_error_of(weka_trace("A", R"({"t": 0, "type": "x"})"))
            .find("w.json: requests[0].type: \"x\" is not one of n, s, subagent") == 0);
  CHECK(weka_error_of(weka_trace("A", R"({"type": "n", "model": "m", "in": 4, "out": 1})"))
            .find("w.json: requests[0].t: is required") == 0);
  CHECK(weka_error_of(weka_trace("A", R"({"t": 0, "type": "n", "model": "m", "out": 1})"))
            .find("w.json: requests[0].in: is required") == 0);
  CHECK(weka_error_of(weka_trace("A", weka_call("0", 0, 1)))
            .find("w.json: requests[0].in: 0 is out of range") == 0);
  CHECK(weka_error_of(weka_trace("A", ok + ", " + weka_call("1", 8, -1)))
            .find("w.json: requests[1].out: -1 is out of range") == 0);
  CHECK(weka_error_of(weka_trace("A", weka_call("0", 4, 1, R"(, "foo": 1)")))
            .find("w.json: requests[0].foo: unknown key in a normal call (type n)") == 0);
  CHECK(weka_error_of(weka_trace("A", weka_call("0", 5, 1, R"(, "hash_ids": [1, 2, 3])")))
            .find("w.json: requests[0].hash_ids: 3 blocks for in 5 tokens in blocks of 4 (at "
                  "most 2)") == 0);
}

TEST_CASE("weka_trace: time going backwards and repeated ids are errors") {
  CHECK(weka_error_of(weka_trace("A", weka_call("2", 8, 1) + ", " + weka_call("1", 9, 1)))
            .find("w.json: requests[1].t: 1 s is before the 2 s of requests[0]: time goes "
                  "backwards within A") == 0);
  CHECK(weka_error_of(
            weka_trace("A", weka_call("0", 8, 1) + ", " +
                                weka_subagent("1", "a",
                                              weka_call("3", 4, 1) + ", " + weka_call("2", 4, 1))))
            .find("w.json: requests[1].requests[1].t: 2 s is before the 3 s of "
                  "requests[1].requests[0]") == 0);
  CHECK(weka_error_of(weka_trace("A", weka_call("0", 8, 1) + ", " +
                                          weka_subagent("1", "a", weka_call("1", 4, 1)) + ", " +
                                          weka_subagent("1", "a", weka_call("1", 4, 1))))
            .find("w.json: requests[2].agent_id: \"a\" is also the agent_id of requests[1]") == 0);
  CHECK(weka_error_of(weka_trace("A", weka_call("0", 8, 1) + ", " +
                                          weka_subagent("1", "a", weka_subagent("1", "b", ""))))
            .find("w.json: requests[1].requests[0].type: \"subagent\" is not one of n, s") == 0);
  const std::string a = weka_trace("A", weka_call("0", 8, 1));
  CHECK(weka_error({{"a.json", a}, {"b.json", a}})
            .find("b.json: id: \"A\" is also the session of a.json") == 0);
  CHECK(weka_error({{"a.json", a}, {"b.json", weka_trace("B", weka_call("0", 8, 1), 8)}})
            .find("b.json: block_size: 8 differs from the 4 of a.json") == 0);
}

TEST_CASE("weka_trace: a folder is every *.json in it by file name, and must hold one") {
  namespace fs = std::filesystem;
  const fs::path dir = test::fresh_dir("weka-folder");
  std::ofstream(dir / "b.json") << weka_trace("B", weka_call("0", 8, 1));
  std::ofstream(dir / "a.json") << weka_trace("A", weka_call("0", 8, 1));
  std::ofstream(dir / "notes.txt") << "not a trace";
  const auto files = weka_trace_files(dir.string());
  REQUIRE(files.size() == 2);
  CHECK(fs::path(files[0]).filename() == "a.json");
  CHECK(fs::path(files[1]).filename() == "b.json");
  Config config;
  config.dataset.type = DatasetType::kWekaTrace;
  config.dataset.path = dir.string();
  const auto all = load_dataset(config);
  REQUIRE(all.size() == 2);
  CHECK(all[0].conversation_id == "A");
  CHECK(all[1].conversation_id == "B");
  const fs::path empty = test::fresh_dir("weka-empty");
  CHECK(test::error_message<ConfigError>([&] {
          weka_trace_files(empty.string());
        }).find("dataset.path: the folder holds no *.json trace files") != std::string::npos);
  config.load.mode = LoadMode::kTrace;
  CHECK(test::error_message<ConfigError>([&] {
          load_dataset(config);
        }).find("load.mode trace needs start times across sessions") != std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(empty);
}

TEST_CASE("weka_trace: the config takes a folder for this type only and refuses load.mode trace") {
  namespace fs = std::filesystem;
  const fs::path dir = test::fresh_dir("weka-config");
  std::ofstream(dir / "a.json") << weka_trace("A", weka_call("0", 8, 1));
  const std::string dataset = "dataset:\n  type: weka_trace\n  path: " + dir.string() + "\n";
  const Config config = parse_config(dataset, "c.yaml", {});
  CHECK(config.dataset.type == DatasetType::kWekaTrace);
  CHECK(load_dataset(config).size() == 1);
  CHECK(test::error_message<ConfigError>([&] {
          parse_config("dataset:\n  type: jsonl\n  path: " + dir.string() + "\n", "c.yaml", {});
        }).find("is a folder, not a file") != std::string::npos);
  CHECK(test::error_message<ConfigError>([&] {
          parse_config(dataset + "load:\n  mode: trace\n", "c.yaml", {});
        }).find("load.mode: trace needs start times across sessions") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("weka_trace: a lead and its sub-agents replay as one family") {
  const auto all = parse_weka_traces({{"a.json", lead_with_subagents()}}, Config{});
  REQUIRE(all.size() == 1);
  const auto& lead = all[0];
  CHECK(lead.conversation_id == "L");
  REQUIRE(lead.turns.size() == 3);
  CHECK(lead.turns[1].delay_ms == doctest::Approx(2500));
  CHECK(lead.turns[1].input_tokens_est == 8);
  CHECK(lead.turns[2].delay_ms == doctest::Approx(0));
  REQUIRE(lead.subagents.size() == 2);
  const auto& a1 = lead.subagents[0];
  CHECK(a1.conversation_id == "L/a1");
  CHECK(a1.parent == -1);  // the lead
  CHECK(a1.spawn_after_turn == 1);
  REQUIRE(a1.turns.size() == 2);
  CHECK(a1.turns[0].max_tokens == 2);
  CHECK(a1.turns[1].delay_ms == doctest::Approx(200));
  CHECK(a1.turns[1].input_tokens_est == 2);
  const auto& a2 = lead.subagents[1];
  CHECK(a2.conversation_id == "L/a2");
  CHECK(a2.parent == -1);
  CHECK(a2.spawn_after_turn == 1);  // in parallel with a1
  REQUIRE(a2.turns.size() == 1);
  // The lead's first prompt and a1's start with the same block (local id 1 of one trace).
  const std::string block = lead.turns[0].user_text.substr(0, 16);
  CHECK(a1.turns[0].user_text.substr(0, 16) == block);
}

TEST_CASE("weka_trace: a marker before the first call replays as a lead of its own") {
  const auto all = parse_weka_traces(
      {{"k.json", weka_trace("K", weka_subagent("0", "early", weka_call("0", 4, 1)) + ", " +
                                      weka_call("1", 4, 1))}},
      Config{});
  REQUIRE(all.size() == 2);
  CHECK(all[0].conversation_id == "K");
  CHECK(all[0].subagents.empty());
  CHECK(all[1].conversation_id == "K/early");
}

}  // namespace convoy::controller
