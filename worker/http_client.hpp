// HTTP over libcurl's multi socket API, driven by the EventLoop. Streams are parsed as SSE as
// their bytes arrive and every content event is stamped with the steady time of its read.
#pragma once

#include <memory>

#include "worker/event_loop.hpp"
#include "worker/transport.hpp"

namespace convoy::worker {

// Whether this libcurl can reuse an HTTP/2 prior-knowledge (h2c, `http://` with http2)
// connection. libcurl before 8.0.0 (Debian 12 has 7.88.1) breaks every request after the
// first on such a connection with "Error in the HTTP2 framing layer" (curl issue 10634, fixed
// by curl PR 10643). Where it cannot, each h2c request gets a connection of its own.
bool h2c_reuse_supported();

// The real Transport. Its contract (worker/transport.hpp) holds for every transfer.
class HttpClient final : public Transport {
 public:
  explicit HttpClient(EventLoop& loop);
  ~HttpClient() override;  // cancels everything in flight without calling callbacks
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a transfer now; `done` runs exactly once from the loop (never from inside start()).
  RequestId start(HttpRequest request, DoneCallback done) override;
  // Cancels one transfer: `done` runs with error kind kCancelled. No-op for unknown ids.
  void cancel(RequestId id) override;
  // Cancels every transfer in flight (each `done` runs with kCancelled).
  void cancel_all() override;
  size_t in_flight() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::worker
