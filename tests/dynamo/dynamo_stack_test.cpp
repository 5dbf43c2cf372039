// scripts/dynamo itself: a real frontend with N mocker workers comes up on
// loopback, lists the model, reports N distinct worker ids, serves /metrics, and goes down.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "dynamo/dynamo_stack.hpp"
#include "e2e/http_get.hpp"

using namespace convoy::test;

TEST_CASE("scripts/dynamo up: the real frontend lists Qwen/Qwen3-0.6B with every worker") {
  std::filesystem::path state;
  {
    DynamoOptions options;
    options.workers = 2;
    DynamoStack stack(options, "dynamo-stack");
    CONVOY_REQUIRE_DYNAMO(stack);
    state = stack.state_dir();
    const auto [status, body] = http_get(stack.port(), "/v1/models");
    CHECK(status == 200);
    CHECK(body.find("\"Qwen/Qwen3-0.6B\"") != std::string::npos);
    REQUIRE(stack.workers().size() == 2);
    const std::vector<std::string> ids = stack.worker_ids();
    CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 2);
    for (const std::string& id : ids)
      CHECK(id.find_first_not_of("0123456789") == std::string::npos);
    // The frontend's own families on its HTTP port; each worker's on its status port.
    const auto [fs, frontend_metrics] = http_get(stack.port(), "/metrics");
    CHECK(fs == 200);
    CHECK(frontend_metrics.find("dynamo_frontend_") != std::string::npos);
    const std::string& w = stack.workers()[0].metrics_url;
    const int wport = std::stoi(w.substr(w.rfind(':') + 1, w.find('/', 8) - w.rfind(':') - 1));
    const auto [ws, worker_metrics] = http_get(wport, "/metrics");
    CHECK(ws == 200);
    CHECK(worker_metrics.find("dynamo_component_") != std::string::npos);
  }
  // Down: every process group is gone and the stack file retired.
  CHECK_FALSE(std::filesystem::exists(state / "stack"));
  CHECK(std::filesystem::exists(state / "stack.stopped"));
}
