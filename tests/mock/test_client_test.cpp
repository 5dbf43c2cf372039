// The test client (Beast's sync HTTP client) and the mock's plain endpoints.
#include "mock/test_client.hpp"

#include <doctest/doctest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
// GCC 12 with sanitizers reports a false maybe-uninitialized inside Beast's response parser.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace convoy::mock::test {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Client::Impl {
  explicit Impl(uint16_t p) : port(p), socket(ioc) { connect(); }
  void connect() {
    beast::error_code ec;
    socket.close(ec);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
    connected = !ec;
  }
  uint16_t port;
  net::io_context ioc;
  tcp::socket socket;
  beast::flat_buffer buffer;
  bool connected = false;
};

Client::Client(uint16_t port) : impl_(std::make_unique<Impl>(port)) {}
Client::~Client() = default;

Response Client::request(const std::string& method, const std::string& target,
                         const std::string& body, const Headers& headers) {
  Response out;
  if (!impl_->connected) impl_->connect();
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();
  beast::error_code ec;
  http::write(impl_->socket, req, ec);
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  if (!ec) http::read(impl_->socket, impl_->buffer, parser, ec);
  if (ec) {
    out.error = ec.message();
    impl_->connected = false;
    impl_->buffer.clear();
    return out;
  }
  auto res = parser.release();
  out.status = static_cast<int>(res.result_int());
  out.body = std::move(res.body());
  for (const auto& field : res) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out.headers[name] = std::string(field.value());
  }
  if (!res.keep_alive()) impl_->connected = false;
  return out;
}

std::string Response::header(const std::string& lower_name) const {
  const auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    const std::string event = body.substr(pos, end == std::string::npos ? end : end - pos);
    if (event.rfind("data: ", 0) == 0) out.push_back(event.substr(6));
    if (end == std::string::npos) break;
    pos = end + 2;
  }
  return out;
}

rapidjson::Document parse_json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  return doc;
}

std::string json_string(const std::string& text) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
  return buf.GetString();
}

std::string chat_body(const std::vector<std::pair<std::string, std::string>>& messages,
                      int64_t max_tokens, bool stream, const std::string& extra) {
  std::string body = R"({"model":"mock-model","messages":[)";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) body += ',';
    body += R"({"role":)" + json_string(messages[i].first) + R"(,"content":)" +
            json_string(messages[i].second) + "}";
  }
  body += R"(],"max_tokens":)" + std::to_string(max_tokens) + R"(,"stream":)" +
          (stream ? "true" : "false");
  if (!extra.empty()) body += "," + extra;
  return body + "}";
}

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
    CHECK(res.body == R"({"message":"Model not found: gpt-x","type":"Not Found","code":404})");
  }
  SUBCASE("a body that is not JSON is 400") {
    const auto res = client.post("/v1/chat/completions", "{nope");
    CHECK(res.status == 400);
    const auto doc = parse_json(res.body);
    CHECK(std::string(doc["message"].GetString()).rfind("Failed to parse the request body", 0) ==
          0);
  }
  SUBCASE("missing messages is 400") {
    const auto res = client.post("/v1/chat/completions", R"({"model":"mock-model"})");
    CHECK(res.status == 400);
    CHECK(res.body.find("missing field `messages`") != std::string::npos);
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
