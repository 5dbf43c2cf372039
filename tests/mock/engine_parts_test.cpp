// The mock's pure parts: tokenization, prefix cache, router cost, pins, flags.
#include <doctest/doctest.h>

#include <string>

#include "mock/contract.hpp"
#include "mock/options.hpp"
#include "mock/pin_table.hpp"
#include "mock/prefix_cache.hpp"
#include "mock/router.hpp"
#include "mock/tokens.hpp"

namespace convoy::mock {
namespace {

TEST_CASE("tokens: 4 bytes per token, chained hashes over full blocks") {
  CHECK(count_tokens("") == 0);
  CHECK(count_tokens("abcd") == 1);
  CHECK(count_tokens("abcde") == 2);
  CHECK(output_text(5).size() == 20);

  const std::string a(4 * 4 * 3 + 5, 'a');  // block_size 4: 3 full blocks + a partial one
  const auto ha = block_hashes(a, 4);
  CHECK(ha.size() == 3);
  std::string b = a;
  b[20] = 'b';  // inside block 1
  const auto hb = block_hashes(b, 4);
  CHECK(hb[0] == ha[0]);
  CHECK(hb[1] != ha[1]);
  CHECK(hb[2] != ha[2]);  // chained: a change poisons every later block

  SUBCASE("the chat template makes each turn's sequence a prefix of the next prompt") {
    std::string turn1;
    append_chat_message(turn1, "user", "hello");
    turn1.append(kChatGenerationPrompt);
    std::string held = turn1 + output_text(3);
    held.append(kChatMessageEnd);
    std::string turn2;
    append_chat_message(turn2, "user", "hello");
    append_chat_message(turn2, "assistant", output_text(3));
    append_chat_message(turn2, "user", "more");
    CHECK(turn2.rfind(held, 0) == 0);
  }
}

TEST_CASE("prefill time follows Dynamo's mocker formula") {
  CHECK(prefill_ms(0) == doctest::Approx(16.50142));
  CHECK(prefill_ms(1000) == doctest::Approx(0.4209989 + 15.18344 + 16.50142));
}

TEST_CASE("prefix cache: longest cached prefix, LRU eviction") {
  PrefixCache cache(4);
  cache.insert({1, 2, 3});
  CHECK(cache.match({1, 2, 3, 4}) == 3);
  CHECK(cache.match({1, 9, 3}) == 1);
  CHECK(cache.match({9}) == 0);
  cache.insert({5, 6});  // 5 blocks > 4: the least recently used (3, the old tail) goes
  CHECK(cache.size_blocks() == 4);
  CHECK(cache.evicted_blocks() == 1);
  CHECK(cache.match({1, 2, 3}) == 2);
  CHECK(cache.match({5, 6}) == 2);
  cache.clear();
  CHECK(cache.match({5}) == 0);
}

TEST_CASE("router: kv cost, round-robin, random, down workers") {
  CHECK(kv_cost({true, 2, 0, 0}, 5) == 3);
  CHECK(kv_cost({true, 8, 0, 1}, 5) == 1);
  CHECK(kv_cost({true, 0, 4, 6}, 5) == 15);

  SUBCASE("kv prefers the cached worker unless it is loaded") {
    Router router(RouterMode::kKv, 1);
    std::vector<WorkerLoad> loads(3);
    loads[1].cached_blocks = 4;
    CHECK(router.choose(loads, 5) == 1);
    loads[1].active_decode_blocks = 10;
    CHECK(router.choose(loads, 5) != 1);
    loads[0].up = loads[2].up = false;
    CHECK(router.choose(loads, 5) == 1);
    loads[1].up = false;
    CHECK(router.choose(loads, 5) == -1);
  }
  SUBCASE("round-robin cycles over up workers") {
    Router router(RouterMode::kRoundRobin, 1);
    std::vector<WorkerLoad> loads(3);
    loads[1].up = false;
    CHECK(router.choose(loads, 1) == 0);
    CHECK(router.choose(loads, 1) == 2);
    CHECK(router.choose(loads, 1) == 0);
  }
  SUBCASE("random is seeded") {
    Router a(RouterMode::kRandom, 5);
    Router b(RouterMode::kRandom, 5);
    const std::vector<WorkerLoad> loads(4);
    for (int i = 0; i < 20; ++i) CHECK(a.choose(loads, 1) == b.choose(loads, 1));
  }
}

TEST_CASE("pin table: TTL, refresh, reap") {
  PinTable pins;
  const Clock::time_point t0{};
  const auto ttl = std::chrono::seconds(10);
  pins.pin("a", 2, PinKind::kRouter, ttl, t0);
  CHECK(pins.find("a", t0 + std::chrono::seconds(5))->worker == 2);
  CHECK(pins.refresh("a", t0 + std::chrono::seconds(5)));
  CHECK(pins.find("a", t0 + std::chrono::seconds(14)).has_value());
  CHECK_FALSE(pins.find("a", t0 + std::chrono::seconds(15)).has_value());
  pins.pin("b", 1, PinKind::kEngine, ttl, t0);
  pins.pin("c", 1, PinKind::kEngine, ttl * 2, t0);
  CHECK(pins.reap(t0 + std::chrono::seconds(12)) == 1);
  CHECK(pins.size() == 1);
  CHECK(pins.unpin("c"));
  CHECK_FALSE(pins.refresh("c", t0));
}

TEST_CASE("json_position reports serde's line and column") {
  CHECK(json_position(R"({"a":{"b":"xy"}})", {"a", "b"}, false) == "at line 1 column 14");
  CHECK(json_position("{\"a\":\n {\"b\":\"xy\"}}", {"a", "b"}, false) == "at line 2 column 10");
  CHECK(json_position(R"({"a":{"b":"xy"}})", {"a", "b"}, true) == "at line 1 column 9");
}

TEST_CASE("flags parse into options, bad flags exit 2") {
  auto ok = parse_options({"--port", "0", "--contract", "legacy", "--router-mode", "round-robin",
                           "--engine-sessions", "true", "--affinity-ttl-s", "30", "--workers", "8",
                           "--speedup", "100", "--error-rate", "0.1"});
  REQUIRE(ok.options.has_value());
  CHECK(ok.options->port == 0);
  CHECK(ok.options->contract == Contract::kLegacy);
  CHECK(ok.options->router_mode == RouterMode::kRoundRobin);
  CHECK(ok.options->engine_sessions);
  CHECK(*ok.options->affinity_ttl_s == 30);
  CHECK(ok.options->workers == 8);

  for (const auto& bad : std::vector<std::vector<std::string>>{{"--contract", "v2"},
                                                               {"--port", "70000"},
                                                               {"--error-rate", "2"},
                                                               {"--engine-sessions", "maybe"},
                                                               {"--no-such-flag"},
                                                               {"--speedup", "0"}}) {
    CAPTURE(bad.front());
    const auto parsed = parse_options(bad);
    CHECK_FALSE(parsed.options.has_value());
    CHECK(parsed.exit_code == 2);
    CHECK_FALSE(parsed.message.empty());
  }
  const auto help = parse_options({"--help"});
  CHECK_FALSE(help.options.has_value());
  CHECK(help.exit_code == 0);
  CHECK(help.message.find("--kv-blocks-per-worker") != std::string::npos);
}

}  // namespace
}  // namespace convoy::mock
