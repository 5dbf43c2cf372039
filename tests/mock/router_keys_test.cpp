// convoy-mock honours other routers' session keys: SGLang Model Gateway's X-SMG-Routing-Key
// header and SGLang's body session_id go to one worker by a hash of the key, vLLM's
// X-data-parallel-rank pins the DP rank, whatever the router mode would pick.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <set>
#include <string>

#include "test_client.hpp"

using namespace convoy::mock;
using namespace convoy::mock::test;

namespace {

constexpr char kWantWorker[] = R"("nvext":{"extra_fields":["worker_id"]})";

Options random_mock_options() {
  Options o = test_options();
  o.workers = 8;
  o.data_parallel_size = 2;
  o.router_mode = RouterMode::kRandom;
  o.itl_ms = 0;
  return o;
}

}  // namespace

TEST_CASE("mock router keys: one key, one worker, and a DP rank header pins the rank") {
  RunningMock mock(random_mock_options());
  Client client(mock.port);
  auto worker_of = [&](const std::string& extra, const Headers& headers) {
    const auto r =
        client.post("/v1/chat/completions", chat_body({{"user", "hi"}}, 2, false, extra), headers);
    REQUIRE(r.status == 200);
    return served_worker(parse_json(r.body), 2);
  };
  std::set<int> by_header;
  std::set<int> by_body;
  std::set<int> unkeyed;
  std::set<int> ranks;
  for (int i = 0; i < 12; ++i) {
    by_header.insert(worker_of(kWantWorker, {{"X-SMG-Routing-Key", "conv-1"}}));
    by_body.insert(worker_of(std::string(R"("session_id":"conv-2",)") + kWantWorker, {}));
    unkeyed.insert(worker_of(kWantWorker, {}));
    ranks.insert(worker_of(kWantWorker, {{"X-data-parallel-rank", "1"}}) % 2);
  }
  CHECK(by_header.size() == 1);
  CHECK(by_body.size() == 1);
  CHECK(unkeyed.size() > 1);  // random routing: 12 picks of 8 workers all equal is 8^-11
  CHECK(ranks == std::set<int>{1});
}
