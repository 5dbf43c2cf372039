// The mock's plain endpoints (the client itself is in test_client.cpp).
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "mock/test_client.hpp"

namespace convoy::mock::test {

namespace {

const std::string kHello = chat_body({{"user", "hello"}}, 2, false);

TEST_CASE("mock serves the OpenAI discovery and health endpoints") {
  RunningMock mock(test_options());
  Client client(mock.port);

  SUBCASE("models lists the configured model") {
    const auto res = client.get("/v1/models");
    CHECK(res.status == 200);
    const auto doc = parse_json(res.body);
    REQUIRE(doc.IsObject());
    CHECK(std::string(doc["data"][0]["id"].GetString()) == "mock-model");
  }
  SUBCASE("health and live answer 200") {
    CHECK(client.get("/health").status == 200);
    CHECK(client.get("/live").status == 200);
  }
  SUBCASE("unknown paths and methods get Dynamo-shaped errors") {
    const auto res = client.get("/nope");
    CHECK(res.status == 404);
    const auto doc = parse_json(res.body);
    CHECK(doc["code"].GetInt() == 404);
    CHECK(std::string(doc["type"].GetString()) == "Not Found");
    CHECK(client.get("/v1/chat/completions").status == 405);
  }
  SUBCASE("metrics are Prometheus text with requests, TTFT and per-worker gauges") {
    REQUIRE(client.post("/v1/chat/completions", kHello).status == 200);
    const auto res = client.get("/metrics");
    CHECK(res.status == 200);
    CHECK(res.header("content-type").rfind("text/plain", 0) == 0);
    CHECK(res.body.find("convoy_mock_requests_total{model=\"mock-model\",endpoint=\"chat\","
                        "status=\"200\"} 1") != std::string::npos);
    CHECK(res.body.find("convoy_mock_time_to_first_token_seconds_count{model=\"mock-model\"} 1") !=
          std::string::npos);
    CHECK(res.body.find("convoy_mock_cached_tokens_total") != std::string::npos);
    CHECK(res.body.find("convoy_mock_worker_active_sequences{worker=\"3\"} 0") !=
          std::string::npos);
  }
}

TEST_CASE("mock validates requests like Dynamo's frontend") {
  RunningMock mock(test_options());
  Client client(mock.port);

  SUBCASE("another model is 404 Model not found") {
    const auto res = client.post("/v1/chat/completions",
                                 R"({"model":"gpt-x","messages":[{"role":"user","content":"a"}]})");
    CHECK(res.status == 404);
    CHECK(res.body == R"({"message":"Model not found","type":"Not Found","code":404})");
  }
  SUBCASE("a body that is not JSON is 400 with serde's words and position") {
    auto res = client.post("/v1/chat/completions", R"({"model":"mock-model",})");
    CHECK(res.status == 400);
    CHECK(std::string(parse_json(res.body)["message"].GetString()) ==
          "Failed to deserialize the JSON body into the target type: trailing comma at line 1 "
          "column 23");
    res = client.post("/v1/chat/completions", "");
    CHECK(std::string(parse_json(res.body)["message"].GetString()) ==
          "Failed to deserialize the JSON body into the target type: EOF while parsing a value at "
          "line 1 column 0");
  }
  SUBCASE("the legacy era leaves a syntax error to axum: a text/plain body") {
    auto options = test_options();
    options.contract = Contract::kLegacy;
    RunningMock legacy(options);
    Client c(legacy.port);
    const auto res = c.post("/v1/chat/completions", R"({"model":"mock-model",})");
    CHECK(res.status == 400);
    CHECK(res.body ==
          "Failed to parse the request body as JSON: trailing comma at line 1 column 23");
    CHECK(c.post("/tokenize", "{}").body.empty());
    CHECK(c.post("/tokenize", "{}").status == 404);
  }
  SUBCASE("missing messages is 400 at the end of the object; Dynamo's own validation texts") {
    auto res = client.post("/v1/chat/completions", R"({"model":"mock-model"})");
    CHECK(res.status == 400);
    CHECK(std::string(parse_json(res.body)["message"].GetString()) ==
          "Failed to deserialize the JSON body into the target type: missing field `messages` at "
          "line 1 column 22");
    res = client.post("/v1/chat/completions", R"({"model":"mock-model","messages":[]})");
    CHECK(std::string(parse_json(res.body)["message"].GetString()) ==
          "Validation: The 'messages' field cannot be empty. At least one message is required.");
    res = client.post("/v1/chat/completions", chat_body({{"user", "a"}}, 0, false));
    CHECK(std::string(parse_json(res.body)["message"].GetString()) ==
          "Validation: Max tokens must be greater than 0, got 0");
  }
  SUBCASE("an unknown route and a wrong method answer as Dynamo's router does") {
    auto res = client.post("/tokenize", "{}");
    CHECK(res.status == 404);
    CHECK(res.body ==
          R"({"message":"Route not found: POST /tokenize","type":"Not Found","code":404})");
    res = client.get("/v1/chat/completions");
    CHECK(res.status == 405);
    CHECK(res.body.empty());
    CHECK(res.header("allow") == "POST");
    CHECK(client.post("/v1/models", "").header("allow") == "GET,HEAD");
  }
  SUBCASE("x-request-id is echoed") {
    const auto res = client.post("/v1/chat/completions", kHello, {{"X-Request-ID", "req-42"}});
    CHECK(res.status == 200);
    CHECK(res.header("x-request-id") == "req-42");
  }
  SUBCASE("completions and embeddings answer with usage") {
    auto res = client.post("/v1/completions",
                           R"({"model":"mock-model","prompt":"12345678","max_tokens":3})");
    CHECK(res.status == 200);
    auto doc = parse_json(res.body);
    CHECK(doc["usage"]["prompt_tokens"].GetInt() == 2);
    CHECK(doc["usage"]["completion_tokens"].GetInt() == 3);
    res = client.post("/v1/embeddings", R"({"model":"mock-model","input":["abcd","efgh"]})");
    CHECK(res.status == 200);
    doc = parse_json(res.body);
    CHECK(doc["data"].Size() == 2);
    CHECK(doc["usage"]["prompt_tokens"].GetInt() == 2);
  }
}

TEST_CASE("mock --log-requests writes one JSON line per request") {
  const std::string path = std::string(CONVOY_BINARY_DIR) + "/mock_log_requests_test.jsonl";
  std::remove(path.c_str());
  {
    auto options = test_options();
    options.log_requests_path = path;
    RunningMock mock(options);
    Client client(mock.port);
    REQUIRE(client.post("/v1/chat/completions", kHello, {{"X-Correlation-ID", "c-1"}}).status ==
            200);
    REQUIRE(client.get("/health").status == 200);
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 2);
  const auto first = parse_json(lines[0]);
  REQUIRE(first.IsObject());
  CHECK(std::string(first["target"].GetString()) == "/v1/chat/completions");
  CHECK(std::string(first["headers"]["X-Correlation-ID"].GetString()) == "c-1");
  CHECK(first["body"]["max_tokens"].GetInt() == 2);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace convoy::mock::test
