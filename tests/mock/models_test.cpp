// convoy-mock --model NAME[:ITL_MS], repeated: several model ids served, each at its own speed.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <string>
#include <vector>

#include "mock/options.hpp"
#include "test_client.hpp"

using namespace convoy::mock;
using convoy::mock::test::Client;
using convoy::mock::test::RunningMock;

namespace {

std::string model_body(const std::string& model, int64_t max_tokens) {
  return "{\"model\":\"" + model +
         "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":" +
         std::to_string(max_tokens) + ",\"stream\":false}";
}

}  // namespace

TEST_CASE("mock --model repeated serves several models, NAME:ITL_MS sets one's decode step") {
  auto parsed = parse_options(
      std::vector<std::string>{"--model", "a", "--model", "b:12.5", "--model", "llama3:8b"});
  REQUIRE(parsed.options);
  const Options& o = *parsed.options;
  CHECK(o.model == "a");
  CHECK(served_models(o) == std::vector<std::string>{"a", "b", "llama3:8b"});
  CHECK(serves_model(o, "b"));
  CHECK_FALSE(serves_model(o, "c"));
  CHECK(itl_ms_for(o, "a") == o.itl_ms);
  CHECK(itl_ms_for(o, "b") == 12.5);

  SUBCASE("a name given again keeps its place and takes the later speed") {
    auto again =
        parse_options(std::vector<std::string>{"--model", "a", "--model", "b", "--model", "b:3"});
    REQUIRE(again.options);
    CHECK(served_models(*again.options) == std::vector<std::string>{"a", "b"});
    CHECK(itl_ms_for(*again.options, "b") == 3);
  }
  SUBCASE("without --model: mock-model") {
    auto plain = parse_options(std::vector<std::string>{});
    REQUIRE(plain.options);
    CHECK(served_models(*plain.options) == std::vector<std::string>{"mock-model"});
  }
  SUBCASE("an empty name is a usage error") {
    auto bad = parse_options(std::vector<std::string>{"--model", ":5"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.message.find("--model") != std::string::npos);
  }
}

TEST_CASE("mock with two models: /v1/models lists both and each answers at its own speed") {
  Options o = convoy::mock::test::test_options();
  o.model = "fast";
  o.more_models = {"slow"};
  o.itl_ms = 1;
  o.itl_ms_by_model["slow"] = 20;
  RunningMock mock(o);
  Client client(mock.port);
  const auto list = convoy::mock::test::parse_json(client.get("/v1/models").body);
  REQUIRE(list["data"].Size() == 2);
  CHECK(std::string(list["data"][1]["id"].GetString()) == "slow");

  auto timed = [&](const std::string& model) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = client.post("/v1/chat/completions", model_body(model, 10));
    const auto ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(r.status == 200);
    CHECK(std::string(convoy::mock::test::parse_json(r.body)["model"].GetString()) == model);
    return ms;
  };
  const double fast_ms = timed("fast");
  const double slow_ms = timed("slow");
  INFO("fast " << fast_ms << " ms, slow " << slow_ms << " ms");
  CHECK(slow_ms >= 9 * 20 * 0.9);  // 9 decode steps after the first token
  CHECK(slow_ms > fast_ms + 100);
  CHECK(client.post("/v1/chat/completions", model_body("other", 2)).status == 404);
}
