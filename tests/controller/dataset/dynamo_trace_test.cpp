// dataset.type dynamo_trace: Dynamo's request trace records (schema dynamo.request.trace.v1,
// written here from the record shape in Dynamo's lib/llm/src/request_trace/types.rs) mapped to
// conversations: sessions, turn order by receipt, think time from the gap after a request's end,
// block hashes as prompt prefixes, trace-mode starts, and every malformed record named by file,
// line and key.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "controller/dataset/dataset.hpp"
#include "controller/dataset/dynamo_trace.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace dynamo_trace_test {

// One request_end record. `session` "" leaves agent_context out; hashes "" leaves replay out.
std::string request_end(const std::string& id, int64_t received_ms, double total_ms,
                        const std::string& session, int64_t input, const std::string& hashes,
                        int64_t output, const std::string& parent = "") {
  std::string r = R"({"schema": "dynamo.request.trace.v1", "event_type": "request_end", )";
  r += R"("event_time_unix_ms": )" + std::to_string(received_ms + static_cast<int64_t>(total_ms));
  r += R"(, "event_source": "dynamo")";
  if (!session.empty()) {
    r += R"(, "agent_context": {"session_id": ")" + session + "\"";
    if (!parent.empty()) r += R"(, "parent_session_id": ")" + parent + "\"";
    r += "}";
  }
  r += R"(, "request": {"request_id": ")" + id + R"(", "output_tokens": )" +
       std::to_string(output) + R"(, "request_received_ms": )" + std::to_string(received_ms) +
       R"(, "total_time_ms": )" + std::to_string(total_ms);
  if (hashes.empty()) {
    r += R"(, "input_tokens": )" + std::to_string(input);
  } else {
    r += R"(, "replay": {"trace_block_size": 4, "input_length": )" + std::to_string(input) +
         R"(, "input_sequence_hashes": [)" + hashes + "]}";
  }
  return r + "}}\n";
}

const char* const kToolEnd =
    R"({"schema": "dynamo.request.trace.v1", "event_type": "tool_end", "event_time_unix_ms": )"
    R"(1000300, "event_source": "harness", "agent_context": {"session_id": "agent-1"}, )"
    R"("tool": {"tool_call_id": "t1", "tool_class": "web_search", "duration_ms": 250.0}})"
    "\n";

// Written in end order, as the frontend writes them: agent-1's two requests with a tool call
// between, a sub-agent session it spawned after its first request ended, and a request without
// agent context. agent-1's second request carries the first's context (8 in + 5 out) and 7 new
// tokens.
std::string sample_trace() {
  return request_end("r1", 1'000'000, 100, "agent-1", 8, "11, 22", 5) + kToolEnd +
         request_end("r3", 1'000'050, 20, "", 3, "", 2) +
         request_end("s1", 1'000'120, 30, "sub-1", 6, "11, 33", 0, "agent-1") +
         request_end("r2", 1'000'400, 80, "agent-1", 20, "11, 22, 44, 55, 66", 7);
}

std::vector<proto::Conversation> parse_trace(const std::string& text, Config config = {}) {
  std::istringstream in(text);
  return parse_dynamo_trace(in, "dyn.jsonl", config);
}

std::string error_of_trace(const std::string& text) {
  return test::error_message<ConfigError>([&] { parse_trace(text); });
}

}  // namespace dynamo_trace_test

using namespace dynamo_trace_test;

TEST_CASE("dynamo_trace: sessions become conversations, turns in order of receipt") {
  Config config;
  config.dataset.type = DatasetType::kDynamoTrace;
  const auto all = parse_trace(sample_trace(), config);
  REQUIRE(all.size() == 2);
  // By their first request's receipt: agent-1 (1000000, with its sub-agent), r3 (1000050).
  CHECK(all[0].conversation_id == "agent-1");
  CHECK(all[1].conversation_id == "r3");
  const proto::Conversation& agent = all[0];
  REQUIRE(agent.turns.size() == 2);
  CHECK(agent.turns[0].input_tokens_est == 8);
  CHECK(agent.turns[0].max_tokens == 5);
  // The second request's new input: its context (20) less the first's prompt and reply (8 + 5);
  // convoy sends the history itself.
  CHECK(agent.turns[1].input_tokens_est == 7);
  CHECK(agent.turns[1].max_tokens == 7);
  // The tool call's time is think time: 1000400 - (1000000 + 100).
  CHECK(agent.turns[1].delay_ms == doctest::Approx(300));
  // The sub-agent shares the first block with its parent's first prompt (blocks of 4 tokens,
  // 4 bytes a token), not the second.
  REQUIRE(agent.subagents.size() == 1);
  const proto::SubAgent& sub = agent.subagents[0];
  CHECK(sub.turns[0].user_text.compare(0, 16, agent.turns[0].user_text, 0, 16) == 0);
  CHECK(sub.turns[0].user_text.compare(16, 8, agent.turns[0].user_text, 16, 8) != 0);
  CHECK(sub.turns[0].max_tokens == 1);           // a request that generated nothing asks for one
  CHECK(all[1].turns[0].input_tokens_est == 3);  // input_tokens without replay
}

TEST_CASE(
    "dynamo_trace: a child session is a sub-agent spawned after its parent's last ended "
    "request") {
  const auto all = parse_trace(sample_trace());
  REQUIRE(all[0].subagents.size() == 1);
  const proto::SubAgent& sub = all[0].subagents[0];
  CHECK(sub.conversation_id == "sub-1");
  CHECK(sub.parent == -1);
  CHECK(sub.spawn_after_turn == 1);  // r1 ended at 1000100, before s1 arrived at 1000120
  SUBCASE("a grandchild joins the family under its own parent") {
    const auto nested = parse_trace(sample_trace() +
                                    request_end("g1", 1'000'200, 10, "grand-1", 4, "", 1, "sub-1"));
    REQUIRE(nested[0].subagents.size() == 2);
    CHECK(nested[0].subagents[1].conversation_id == "grand-1");
    CHECK(nested[0].subagents[1].parent == 0);
    CHECK(nested[0].subagents[1].spawn_after_turn == 1);
  }
  SUBCASE("a parent still answering when the child arrived: after the requests received before") {
    const auto overlap = parse_trace(request_end("p1", 1000, 500, "lead", 8, "", 2) +
                                     request_end("c1", 1100, 10, "kid", 4, "", 1, "lead"));
    REQUIRE(overlap.size() == 1);
    CHECK(overlap[0].subagents.at(0).spawn_after_turn == 1);
  }
  SUBCASE("a child before any request of its parent, or of a parent not in the trace, runs alone") {
    const auto alone = parse_trace(request_end("c1", 900, 10, "kid", 4, "", 1, "lead") +
                                   request_end("p1", 1000, 50, "lead", 8, "", 2) +
                                   request_end("o1", 1100, 50, "orphan", 8, "", 2, "gone"));
    REQUIRE(alone.size() == 3);
    CHECK(alone[0].conversation_id == "kid");
    CHECK(alone[2].conversation_id == "orphan");
    for (const auto& c : alone) CHECK(c.subagents.empty());
  }
}

TEST_CASE("dynamo_trace: a request whose context shrank is sent as one new token and counted") {
  const std::string trace = request_end("r1", 1000, 10, "s", 100, "", 20) +
                            request_end("r2", 2000, 10, "s", 30, "", 5) +
                            request_end("r3", 3000, 10, "s", 40, "", 5);
  std::istringstream in(trace);
  std::ostringstream rows;
  const DynamoTraceStats stats = map_dynamo_trace(in, "dyn.jsonl", rows);
  CHECK(stats.not_extending == 1);  // r2: 30 < 100 + 20 (a compacted context)
  const auto all = parse_trace(trace);
  REQUIRE(all.at(0).turns.size() == 3);
  CHECK(all[0].turns[1].input_tokens_est == 1);
  CHECK(all[0].turns[2].input_tokens_est == 5);  // 40 - 30 - 5
}

TEST_CASE("dynamo_trace: load.mode trace starts each session at its first request's receipt") {
  Config config;
  config.dataset.type = DatasetType::kDynamoTrace;
  config.load.mode = LoadMode::kTrace;
  const auto all = parse_trace(sample_trace(), config);
  REQUIRE(all.size() == 2);
  CHECK(all[0].start_ns == 0);
  CHECK(all[1].start_ns == 50'000'000);
  SUBCASE("load.trace applies: speedup 2 halves starts and think times") {
    config.load.trace = TraceConfig{};
    config.load.trace->speedup = 2;
    const auto fast = parse_trace(sample_trace(), config);
    CHECK(fast[1].start_ns == 25'000'000);
    CHECK(fast[0].turns[1].delay_ms == doctest::Approx(150));
  }
}

TEST_CASE("dynamo_trace: the same trace gives the same conversations, and a file opens") {
  const auto once = parse_trace(sample_trace());
  const auto again = parse_trace(sample_trace());
  REQUIRE(once.size() == again.size());
  for (size_t i = 0; i < once.size(); ++i) {
    CHECK(once[i].turns.size() == again[i].turns.size());
    CHECK(once[i].turns[0].user_text == again[i].turns[0].user_text);
  }
  const auto dir = test::fresh_dir("dynamo-trace-open");
  const auto path = dir / "trace.jsonl";
  std::ofstream(path) << sample_trace();
  Config config;
  config.dataset.type = DatasetType::kDynamoTrace;
  config.dataset.path = path.string();
  const auto dataset = open_dataset(config);
  REQUIRE(dataset->size() == 2);
  CHECK(dataset->conversation(0).turns[1].user_text == once[0].turns[1].user_text);
}

TEST_CASE("dynamo_trace: malformed records are errors naming the file, line and key") {
  const std::string good = request_end("r1", 1000, 10, "a", 8, "1, 2", 3);
  SUBCASE("another schema or event") {
    CHECK(error_of_trace(R"({"schema": "v0", "event_type": "request_end"})"
                         "\n")
              .find("dyn.jsonl:1: schema: \"v0\": expected \"dynamo.request.trace.v1\"") == 0);
    CHECK(error_of_trace(good + R"({"schema": "dynamo.request.trace.v1", "event_type": "x"})"
                                "\n")
              .find("dyn.jsonl:2: event_type: \"x\" is not one of request_end") == 0);
  }
  SUBCASE("time going backwards") {
    const std::string backwards =
        R"({"schema": "dynamo.request.trace.v1", "event_type": "request_end", )"
        R"("event_time_unix_ms": 900, "request": {"request_id": "r", )"
        R"("request_received_ms": 1000, "input_tokens": 4}})"
        "\n";
    CHECK(error_of_trace(backwards).find(
              "dyn.jsonl:1: event_time_unix_ms: 900 is before request.request_received_ms 1000: "
              "time goes backwards") == 0);
  }
  SUBCASE("no input length, a hash count that does not fit, two block sizes") {
    const std::string no_input =
        R"({"schema": "dynamo.request.trace.v1", "event_type": "request_end", )"
        R"("event_time_unix_ms": 1000, "request": {"request_id": "r", "request_received_ms": 1000}})"
        "\n";
    CHECK(error_of_trace(no_input).find("dyn.jsonl:1: request.replay: is required") == 0);
    CHECK(error_of_trace(request_end("r", 1000, 1, "a", 9, "1, 2", 3))
              .find("dyn.jsonl:1: request.replay.input_sequence_hashes: 2 hashes for 9 tokens "
                    "in blocks of 4 (expected 3)") == 0);
    std::string other_block = request_end("r2", 2000, 1, "b", 16, "1, 2", 3);
    other_block.replace(other_block.find("\"trace_block_size\": 4"), 21, "\"trace_block_size\": 8");
    CHECK(error_of_trace(good + other_block)
              .find("dyn.jsonl:2: request.replay.trace_block_size: 8 differs from the 4 of line "
                    "1") == 0);
  }
  SUBCASE("a trace without requests") {
    CHECK(error_of_trace(kToolEnd) == "dyn.jsonl: the trace has no request_end records");
  }
}

}  // namespace convoy::controller
