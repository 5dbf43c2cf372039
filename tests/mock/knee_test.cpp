// A knee on purpose: past workers x --max-num-seqs concurrent requests the
// rest wait FIFO for a sequence slot, and the wait is part of their TTFT, so TTFT climbs with
// the queue and a capacity search finds the knee at workers x max-num-seqs.
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "mock/test_client.hpp"

namespace convoy::mock::test {
namespace {

// Median server-side TTFT (nvext.timing.ttft_ms: arrival to first token) of `clients` closed-
// loop clients sending `requests` requests each.
double p50_ttft_ms(uint16_t port, int clients, int requests) {
  std::vector<std::vector<double>> per_client(static_cast<size_t>(clients));
  {
    std::vector<std::jthread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        Client client(port);
        for (int r = 0; r < requests; ++r) {
          const auto res = client.post("/v1/chat/completions",
                                       chat_body({{"user", "q" + std::to_string(c)}}, 10, false,
                                                 R"("nvext":{"extra_fields":["timing"]})"));
          if (res.status != 200) continue;
          per_client[static_cast<size_t>(c)].push_back(
              parse_json(res.body)["nvext"]["timing"]["ttft_ms"].GetDouble());
        }
      });
    }
  }
  std::vector<double> all;
  for (const auto& v : per_client) all.insert(all.end(), v.begin(), v.end());
  REQUIRE(all.size() == static_cast<size_t>(clients * requests));
  std::sort(all.begin(), all.end());
  return all[all.size() / 2];
}

TEST_CASE("TTFT climbs with the queue past workers x max-num-seqs: a knee on purpose") {
  auto options = test_options();
  options.workers = 2;
  options.max_num_seqs = 2;  // the knee: 4 concurrent requests
  options.itl_ms = 4;        // service time ~ 16.5 ms prefill + 9 x 4 ms = 53 ms
  RunningMock mock(options);
  const double below = p50_ttft_ms(mock.port, 2, 8);  // 0.5x: no queue
  const double above = p50_ttft_ms(mock.port, 8, 8);  // 2x: a queue one request deep
  const double far = p50_ttft_ms(mock.port, 16, 6);   // 4x: three deep
  CAPTURE(below);
  CAPTURE(above);
  CAPTURE(far);
  // Below the knee TTFT is the prefill alone; above it each request also waits out one service
  // time per request ahead of it in its worker's queue.
  CHECK(below < 40);
  CHECK(above > below + 30);
  CHECK(far > above + 30);
}

}  // namespace
}  // namespace convoy::mock::test
