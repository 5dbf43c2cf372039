// Test support for the mock's tests: an in-process server and a blocking HTTP client (Beast's
// sync client, implemented in test_client_test.cpp so only one file compiles Beast).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "mock/options.hpp"
#include "mock/server.hpp"

namespace convoy::mock::test {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Response {
  int status = 0;                              // 0 when the exchange failed (see error)
  std::string error;                           // transport error, e.g. a reset mid-stream
  std::string body;                            // de-chunked
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string header(const std::string& lower_name) const;
};

// One keep-alive connection to 127.0.0.1:port.
class Client {
 public:
  explicit Client(uint16_t port);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Response request(const std::string& method, const std::string& target,
                   const std::string& body = "", const Headers& headers = {});
  Response post(const std::string& target, const std::string& body, const Headers& headers = {}) {
    return request("POST", target, body, headers);
  }
  Response get(const std::string& target) { return request("GET", target); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Options for an in-process server on an ephemeral loopback port.
inline Options test_options() {
  Options o;
  o.port = 0;
  return o;
}

struct RunningMock {
  explicit RunningMock(const Options& options) : server(options), port(server.start()) {}
  Server server;
  uint16_t port;
};

// The "data: " payloads of an SSE body, in order (framing checked by the caller).
std::vector<std::string> sse_data(const std::string& body);
rapidjson::Document parse_json(const std::string& text);

// {"model":"mock-model","messages":[...],"max_tokens":N,"stream":S[,extra...]}; `extra` is a
// JSON fragment of further members (without braces), e.g. R"("nvext":{...})".
std::string chat_body(const std::vector<std::pair<std::string, std::string>>& messages,
                      int64_t max_tokens, bool stream, const std::string& extra = "");
std::string json_string(const std::string& text);  // quoted and escaped

// The mock worker (0-based, as /mock/stats numbers them) named by a response's (or stream
// chunk's) nvext.worker_id: worker = (decode_worker_id - 1000) x dp + decode_dp_rank.
inline int served_worker(const rapidjson::Value& doc, int data_parallel_size = 1) {
  const auto& id = doc["nvext"]["worker_id"];
  return static_cast<int>(id["decode_worker_id"].GetUint64() - kInstanceIdBase) *
             data_parallel_size +
         id["decode_dp_rank"].GetInt();
}

}  // namespace convoy::mock::test
