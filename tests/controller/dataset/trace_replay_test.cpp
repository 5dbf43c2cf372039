// load.trace: the window, shift, speedup and idle-gap cap on a trace's conversation starts,
// exactly (integers in, integers out), and what a Mooncake trace replays with it.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "controller/dataset/mooncake.hpp"
#include "controller/dataset/trace_replay.hpp"
#include "test_time.hpp"
#include "test_util.hpp"

namespace convoy::controller {
namespace {

std::vector<int64_t> replayed(const std::vector<int64_t>& trace_ms, const TraceConfig& config) {
  const TraceReplay replay = TraceReplay::from(config);
  std::vector<int64_t> kept;
  for (const int64_t ms : trace_ms) {
    if (replay.keeps(ms * kMs)) kept.push_back(ms * kMs);
  }
  std::vector<int64_t> out_ms;
  for (const int64_t ns : replay_starts_ns(kept, replay)) out_ms.push_back(ns / kMs);
  return out_ms;
}

Config replay_config(const TraceConfig& trace) {
  Config config;
  config.load.mode = LoadMode::kTrace;
  config.load.trace = trace;
  return config;
}

std::vector<proto::Conversation> replay_mooncake(const std::string& text, const Config& config) {
  std::istringstream in(text);
  return parse_mooncake_trace(in, "trace.jsonl", config);
}

}  // namespace

TEST_CASE("load.trace transforms intended starts exactly") {
  const std::vector<int64_t> trace = {0, 1000, 1000, 4000, 64000, 65000, 66500};
  SUBCASE("unset: the trace as recorded") {
    CHECK(replayed(trace, TraceConfig{}) == trace);
    CHECK(TraceReplay::from(std::nullopt).identity());
  }
  SUBCASE("speedup divides every start") {
    CHECK(replayed(trace, TraceConfig{2, 0, {}, {}}) ==
          std::vector<int64_t>{0, 500, 500, 2000, 32000, 32500, 33250});
    CHECK(replayed(trace, TraceConfig{0.5, 0, {}, {}}) ==
          std::vector<int64_t>{0, 2000, 2000, 8000, 128000, 130000, 133000});
  }
  SUBCASE("the window keeps start <= t < end and shifts the first kept to 0") {
    CHECK(replayed(trace, TraceConfig{1, 1, 65, {}}) == std::vector<int64_t>{0, 0, 3000, 63000});
    CHECK(replayed(trace, TraceConfig{1, 0.5, 64, {}}) == std::vector<int64_t>{0, 0, 3000});
    CHECK(replayed(trace, TraceConfig{1, 64, {}, {}}) == std::vector<int64_t>{0, 1000, 2500});
  }
  SUBCASE("a gap longer than max_idle_gap_s becomes it; shorter ones stay") {
    CHECK(replayed(trace, TraceConfig{1, 0, {}, 2.5}) ==
          std::vector<int64_t>{0, 1000, 1000, 3500, 6000, 7000, 8500});
    CHECK(replayed(trace, TraceConfig{1, 0, {}, 0}) == std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0});
  }
  SUBCASE("the cap is in replay time: after speedup, as AIPerf's --max-idle-gap-cap-seconds") {
    // Scaled: 0, 250, 250, 1000, 16000, 16250, 16625; the 15 s gap becomes 2 s.
    CHECK(replayed(trace, TraceConfig{4, 0, {}, 2}) ==
          std::vector<int64_t>{0, 250, 250, 1000, 3000, 3250, 3625});
  }
  SUBCASE("all four at once") {
    // Kept: 1000, 1000, 4000, 64000 -> 0, 0, 3000, 63000 -> /2: 0, 0, 1500, 31500 -> cap 1 s.
    CHECK(replayed(trace, TraceConfig{2, 1, 65, 1}) == std::vector<int64_t>{0, 0, 1000, 2000});
  }
  SUBCASE("rounding never accumulates: each start is scaled from the first") {
    std::vector<int64_t> ones;
    std::vector<int64_t> expected;
    for (int64_t i = 0; i < 1000; ++i) ones.push_back(i);
    const TraceReplay replay = TraceReplay::from(TraceConfig{3, 0, {}, {}});
    const auto out = replay_starts_ns(ones, replay);  // 1 ns apart, a third of a ns replayed
    REQUIRE(out.size() == 1000);
    CHECK(out[999] == 333);
    CHECK(out[3] == 1);
  }
}

TEST_CASE("load.trace on a Mooncake trace: starts, delays and the window") {
  const std::string trace =
      "{\"timestamp\": 1000, \"input_length\": 10}\n"
      "{\"timestamp\": 3000, \"input_length\": 10, \"session_id\": \"s\"}\n"
      "{\"timestamp\": 3500, \"input_length\": 10, \"session_id\": \"s\", \"delay\": 800}\n"
      "{\"timestamp\": 9000, \"input_length\": 10}\n"
      "{\"timestamp\": 21000, \"input_length\": 10}\n";
  SUBCASE("speedup 2: starts and a session's delays halve") {
    const auto all = replay_mooncake(trace, replay_config(TraceConfig{2, 0, {}, {}}));
    REQUIRE(all.size() == 4);
    CHECK(all[1].start_ns == 1000 * kMs);
    CHECK(all[1].turns[1].delay_ms == 400);
    CHECK(all[2].start_ns == 4000 * kMs);
    CHECK(all[3].start_ns == 10000 * kMs);
  }
  SUBCASE("offsets are trace seconds from the first timestamp; the rest is left out") {
    const auto all = replay_mooncake(trace, replay_config(TraceConfig{1, 2, 20, 1.5}));
    REQUIRE(all.size() == 2);
    CHECK(all[0].conversation_id == "s");
    CHECK(all[0].turns.size() == 2);
    CHECK(all[0].start_ns == 0);
    CHECK(all[1].start_ns == 1500 * kMs);  // 6 s of trace time, capped at 1.5 s
  }
  SUBCASE("dataset.conversations counts the conversations the window keeps") {
    Config config = replay_config(TraceConfig{1, 2, {}, {}});
    config.dataset.conversations = 2;
    config.dataset.conversations_set = true;
    const auto all = replay_mooncake(trace, config);
    REQUIRE(all.size() == 2);
    CHECK(all[1].start_ns == 6000 * kMs);
  }
  SUBCASE("a window that keeps nothing is an error that says what the trace spans") {
    const std::string error = test::error_message<ConfigError>([&] {
      replay_mooncake(trace, replay_config(TraceConfig{1, 30, 40, {}}));
    });
    CHECK(error ==
          "trace.jsonl: load.trace: the window [30 s, 40 s) keeps no conversation: the trace's "
          "starts span 0 to 20 s of trace time");
  }
}

TEST_CASE("a trace whose conversation starts go backwards is refused at the row") {
  const std::string backwards =
      "{\"timestamp\": 1000, \"input_length\": 10}\n"
      "{\"timestamp\": 5000, \"input_length\": 10, \"session_id\": \"s\"}\n"
      "{\"timestamp\": 2000, \"input_length\": 10, \"session_id\": \"s\"}\n"
      "{\"timestamp\": 4000, \"input_length\": 10}\n";
  Config config;
  config.load.mode = LoadMode::kTrace;
  CHECK(test::error_message<ConfigError>([&] { replay_mooncake(backwards, config); }) ==
        "trace.jsonl:4: timestamp: 4000 is earlier than the conversation before it (line 2: "
        "5000): a trace's conversations must start in time order (sort the file by timestamp)");
  SUBCASE("a later row of a session is no conversation start: its time is not checked") {
    const auto all =
        replay_mooncake(backwards.substr(0, backwards.rfind("{\"timestamp\": 4000")), config);
    CHECK(all.size() == 2);
  }
  SUBCASE("other modes do not read timestamps") {
    CHECK(replay_mooncake(backwards, Config{}).size() == 3);
  }
}

}  // namespace convoy::controller
