// One client connection: HTTP/1.1 keep-alive request loop, endpoints, and the per-request
// timeline (queue -> prefill -> one SSE event per decode step) driven by an Asio timer.
#pragma once

#include <atomic>
#include <cstdint>

#include <boost/asio/ip/tcp.hpp>

#include "mock/engine.hpp"
#include "mock/options.hpp"
#include "mock/request_log.hpp"
#include "mock/response_store.hpp"

namespace convoy::mock {

// What every connection shares; owned by the server and outliving every connection.
struct ServerContext {
  const Options& options;
  Engine& engine;
  RequestLog* log = nullptr;  // null unless --log-requests
  int64_t created_s = 0;      // "created" of /v1/models
  std::atomic<uint64_t> next_id{1};
  ResponseStore responses{};  // responses' ids -> their conversations (previous_response_id)
};

void start_http_session(boost::asio::ip::tcp::socket socket, ServerContext& context);

}  // namespace convoy::mock
