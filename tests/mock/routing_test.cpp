// Conversation-aware routing made measurable: with bind + kv routing every
// turn stays on its worker and hits its prefix cache; with contract none + random routing
// conversations hop between workers and later turns pay for the prefill again.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

constexpr int kConversations = 8;
constexpr int kTurns = 4;
constexpr int64_t kMaxTokens = 8;

struct TurnResult {
  int worker = -1;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
};

// A long unique first message (a document) and short follow-ups, so that a cache miss on a
// later turn costs far more prefill than a hit.
std::string user_message(int conversation, int turn) {
  const size_t bytes = turn == 0 ? 24000 : 800;
  std::string text =
      "conversation " + std::to_string(conversation) + " turn " + std::to_string(turn) + ":";
  for (size_t i = 0; text.size() < bytes; ++i) {
    text.push_back(static_cast<char>('a' + (i * 7 + static_cast<size_t>(conversation)) % 26));
  }
  return text;
}

// Runs the conversations turn by turn (interleaved), sending bind on non-final turns and close
// on the last, as convoy does in bind mode. Returns results[conversation][turn].
std::vector<std::vector<TurnResult>> run_conversations(Client& client) {
  std::vector<std::vector<std::pair<std::string, std::string>>> histories(kConversations);
  std::vector<std::vector<TurnResult>> results(kConversations);
  for (int turn = 0; turn < kTurns; ++turn) {
    for (int c = 0; c < kConversations; ++c) {
      const std::string id = "conv-" + std::to_string(c);
      histories[c].emplace_back("user", user_message(c, turn));
      const std::string control =
          turn + 1 < kTurns ? R"({"session_id":")" + id + R"(","action":"bind","timeout":300})"
                            : R"({"session_id":")" + id + R"(","action":"close"})";
      const auto res = client.post(
          "/v1/chat/completions",
          chat_body(histories[c], kMaxTokens, false,
                    R"("nvext":{"extra_fields":["worker_id"],"session_control":)" + control + "}"),
          {{"X-Correlation-ID", id}});
      REQUIRE(res.status == 200);
      const auto doc = parse_json(res.body);
      TurnResult r;
      r.worker = served_worker(doc);
      r.prompt_tokens = doc["usage"]["prompt_tokens"].GetInt64();
      r.completion_tokens = doc["usage"]["completion_tokens"].GetInt64();
      r.cached_tokens = doc["usage"]["prompt_tokens_details"]["cached_tokens"].GetInt64();
      results[c].push_back(r);
      histories[c].emplace_back("assistant", doc["choices"][0]["message"]["content"].GetString());
    }
  }
  return results;
}

// Mean server-side TTFT over turns >= 1, from /mock/stats.
double later_turn_ttft_ms(Client& client) {
  const auto stats = parse_json(client.get("/mock/stats").body);
  double sum = 0;
  int64_t count = 0;
  for (const auto& row : stats["ttft_by_turn"].GetArray()) {
    if (row["turn"].GetInt() == 0) continue;
    sum += row["ttft_mean_ms"].GetDouble() * static_cast<double>(row["ttft_count"].GetInt64());
    count += row["ttft_count"].GetInt64();
  }
  REQUIRE(count == kConversations * (kTurns - 1));
  return sum / static_cast<double>(count);
}

Options routing_options(Contract contract, RouterMode router) {
  auto options = test_options();
  options.contract = contract;
  options.router_mode = router;
  options.itl_ms = 1;
  options.speedup = 4;
  options.seed = 7;
  return options;
}

TEST_CASE("bind + kv routing keeps conversations on one worker, none + random does not") {
  double bind_ttft_ms = 0;
  {
    RunningMock mock(routing_options(Contract::kBind, RouterMode::kKv));
    Client client(mock.port);
    const auto results = run_conversations(client);
    for (int c = 0; c < kConversations; ++c) {
      CAPTURE(c);
      CHECK(results[c][0].cached_tokens == 0);
      for (int t = 1; t < kTurns; ++t) {
        CAPTURE(t);
        const auto& prev = results[c][t - 1];
        const auto& cur = results[c][t];
        CHECK(cur.worker == results[c][0].worker);
        // Everything the worker held after the previous turn is cached, up to the last
        // partial block; the new user message is not.
        CHECK(cur.cached_tokens + 64 >= prev.prompt_tokens + prev.completion_tokens);
        CHECK(cur.cached_tokens < cur.prompt_tokens);
        CHECK(cur.cached_tokens > prev.cached_tokens);
      }
    }
    const auto stats = parse_json(client.get("/mock/stats").body);
    CHECK(stats["sessions"]["count"].GetInt() == kConversations);
    CHECK(stats["sessions"]["worker_switches"].GetInt() == 0);
    CHECK(stats["ttft_by_turn"][1]["cache_hit_rate"].GetDouble() > 0.8);
    bind_ttft_ms = later_turn_ttft_ms(client);
  }
  double random_ttft_ms = 0;
  {
    RunningMock mock(routing_options(Contract::kNone, RouterMode::kRandom));
    Client client(mock.port);
    run_conversations(client);
    const auto stats = parse_json(client.get("/mock/stats").body);
    CHECK(stats["sessions"]["worker_switches"].GetInt() > 0);
    CHECK(stats["sessions"]["sessions_with_switches"].GetInt() > kConversations / 2);
    random_ttft_ms = later_turn_ttft_ms(client);
  }
  CAPTURE(bind_ttft_ms);
  CAPTURE(random_ttft_ms);
  CHECK(random_ttft_ms > 1.5 * bind_ttft_ms);
}

}  // namespace
}  // namespace convoy::mock::test
