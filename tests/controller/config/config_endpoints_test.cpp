// target.endpoint responses and messages, target.path and target.responses_state: their
// defaults, their reads and their file:line:key errors.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <string>

#include "controller/config/config.hpp"

using convoy::Config;
using convoy::parse_config;

namespace {

using convoy::test::contains;

}  // namespace

TEST_CASE("target.endpoint responses and messages, path and responses_state are read") {
  SUBCASE("defaults: no path, client state") {
    const Config c = parse_config("", "c.yaml");
    CHECK(c.target.path.empty());
    CHECK(c.target.responses_state == convoy::proto::ResponsesState::kClient);
  }
  SUBCASE("responses with server state and a path") {
    const Config c = parse_config(
        "target:\n  endpoint: responses\n  responses_state: server\n  path: /openai/v1/responses\n",
        "c.yaml");
    CHECK(c.target.endpoint == convoy::proto::Endpoint::kResponses);
    CHECK(c.target.responses_state == convoy::proto::ResponsesState::kServer);
    CHECK(c.target.path == "/openai/v1/responses");
    CHECK(contains(convoy::to_yaml(c), "  path: \"/openai/v1/responses\"\n"));
    CHECK(contains(convoy::to_yaml(c), "  responses_state: server\n"));
  }
  SUBCASE("messages") {
    const Config c = parse_config("target: {endpoint: messages}\n", "c.yaml");
    CHECK(c.target.endpoint == convoy::proto::Endpoint::kMessages);
  }
}

TEST_CASE("target.responses_state and target.path errors name the file, line and key") {
  CHECK_ERROR("target:\n  endpoint: messages\n  responses_state: server\n",
              "c.yaml:3: target.responses_state", "only the responses endpoint",
              "target.endpoint is messages");
  CHECK_ERROR("target:\n  responses_state: server\n", "c.yaml:2: target.responses_state",
              "target.endpoint is chat");
  CHECK_ERROR("target:\n  endpoint: responses\n  responses_state: both\n",
              "c.yaml:3: target.responses_state");
  CHECK_ERROR("target:\n  path: v1/responses\n", "c.yaml:2: target.path",
              "expected a route starting with /");
  CHECK_ERROR("target:\n  path: \"/v1/x?y=1\"\n", "c.yaml:2: target.path");
  CHECK_ERROR("target:\n  endpoint: anthropic\n", "c.yaml:2: target.endpoint", "messages");
}
