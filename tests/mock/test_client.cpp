// The test client: Beast's sync HTTP client over 127.0.0.1 and JSON/SSE helpers, shared by
// the mock tests and the real-Dynamo tests (tests/dynamo).
#include "mock/test_client.hpp"

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

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

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
    // A server that never answers (the real Dynamo 1.2.1 for max_tokens 0) fails the request
    // after this long instead of hanging the test.
    if (connected) {
      timeval timeout{kReadTimeoutS, 0};
      ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    }
  }
  static constexpr time_t kReadTimeoutS = 60;
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

}  // namespace convoy::mock::test
