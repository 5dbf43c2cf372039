// Per-worker sequence limits queue requests FIFO; several loop threads serve concurrent clients.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

TEST_CASE("max-num-seqs queues requests: one slot serves them one after another") {
  auto options = test_options();
  options.workers = 1;
  options.max_num_seqs = 1;
  options.itl_ms = 2;  // 20 tokens: about 16.5 ms prefill + 38 ms decode each
  constexpr int kClients = 4;
  RunningMock mock(options);

  std::vector<double> queue_ms(kClients, -1);
  std::vector<int> statuses(kClients, 0);
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        Client client(mock.port);
        const auto res = client.post(
            "/v1/chat/completions",
            chat_body({{"user", "q"}}, 20, false, R"("nvext":{"extra_fields":["timing"]})"));
        statuses[static_cast<size_t>(i)] = res.status;
        if (res.status == 200) {
          queue_ms[static_cast<size_t>(i)] =
              parse_json(res.body)["nvext"]["timing"]["prefill_wait_time_ms"].GetDouble();
        }
      });
    }
  }
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const int s : statuses) CHECK(s == 200);
  // One slot: the requests cannot overlap, so together they take at least 4 service times
  // (each >= 16.5 + 19 * 2 ms), and someone waited in the queue for at least one of them.
  CHECK(wall_ms >= 4 * (16.5 + 38) * 0.95);
  CHECK(*std::max_element(queue_ms.begin(), queue_ms.end()) >= 50);
}

TEST_CASE("several loop threads serve concurrent streaming clients") {
  auto options = test_options();
  options.threads = 2;
  options.speedup = 20;
  options.itl_ms = 1;
  RunningMock mock(options);
  constexpr int kClients = 6;
  constexpr int kRequests = 10;
  std::vector<int> ok(kClients, 0);
  {
    std::vector<std::jthread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        Client client(mock.port);
        for (int r = 0; r < kRequests; ++r) {
          const auto res = client.post("/v1/chat/completions",
                                       chat_body({{"user", "c" + std::to_string(i)}}, 5, true));
          // 5 tokens, the finish chunk and [DONE]
          if (res.status == 200 && sse_data(res.body).size() == 7) ++ok[static_cast<size_t>(i)];
        }
      });
    }
  }
  for (const int n : ok) CHECK(n == kRequests);
  const auto stats = parse_json(Client(mock.port).get("/mock/stats").body);
  CHECK(stats["completion_tokens"].GetInt() == kClients * kRequests * 5);
}

}  // namespace
}  // namespace convoy::mock::test
