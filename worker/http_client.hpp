// HTTP over libcurl's multi socket API, driven by the EventLoop. Streams are parsed as SSE as
// their bytes arrive and every content event is stamped with the steady time of its read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proto/messages.hpp"
#include "worker/event_loop.hpp"

namespace convoy::worker {

struct HttpRequest {
  std::string url;                   // full url, e.g. http://127.0.0.1:8000/v1/chat/completions
  std::vector<std::string> headers;  // "Name: value" lines (Content-Type is added when absent)
  std::string body;                  // JSON
  std::string endpoint = "chat";     // chat | completions | embeddings: where content lives
  bool streaming = true;             // parse the reply as SSE
  double request_timeout_s = 600;    // whole request
  double connect_timeout_s = 10;
  bool http2 = false;
  bool insecure = false;        // skip TLS verification
  double cancel_after_ms = -1;  // >= 0: cancel the transfer this long after sending (injection)
  // target.max_response_bytes: a non-streamed body, one SSE line or event, or a stream's reply
  // text larger than this fails the request as kResponseTooLarge; nothing buffers beyond it.
  size_t max_response_bytes = 64u << 20;
};

// What came back. Times are steady_now_ns(); 0 = did not happen.
struct HttpResponse {
  int64_t sent_ns = 0;
  int64_t first_byte_ns = 0;
  int64_t first_token_ns = 0;   // first non-empty content
  int64_t second_token_ns = 0;  // second non-empty content event
  int64_t last_token_ns = 0;    // last content event
  int64_t end_ns = 0;
  std::vector<int64_t> chunk_gaps_ns;  // between consecutive non-empty content events
  int64_t content_events = 0;          // non-empty content events (token count fallback)
  std::string reply_text;              // concatenated content (live history)
  // usage, when the server sent it
  bool has_usage = false;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = -1;  // -1: not reported
  int64_t http_status = 0;
  proto::RecordError error;             // kind kNone on success
  bool request_reached_server = false;  // false for dns/connect/tls/send failures
  // The most memory this reply's buffers held at once (body, or SSE line and event buffers,
  // by capacity): at most max_response_bytes (the SSE buffers: each at most that).
  size_t max_buffered_bytes = 0;
};

// Whether this libcurl can reuse an HTTP/2 prior-knowledge (h2c, `http://` with http2)
// connection. libcurl before 8.0.0 (Debian 12 has 7.88.1) breaks every request after the
// first on such a connection with "Error in the HTTP2 framing layer" (curl issue 10634, fixed
// by curl PR 10643). Where it cannot, each h2c request gets a connection of its own.
bool h2c_reuse_supported();

class HttpClient {
 public:
  using RequestId = uint64_t;
  using DoneCallback = std::function<void(HttpResponse&&)>;

  explicit HttpClient(EventLoop& loop);
  ~HttpClient();  // cancels everything in flight without calling callbacks
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a transfer now; `done` runs exactly once from the loop (never from inside start()).
  RequestId start(HttpRequest request, DoneCallback done);
  // Cancels one transfer: `done` runs with error kind kCancelled. No-op for unknown ids.
  void cancel(RequestId id);
  // Cancels every transfer in flight (each `done` runs with kCancelled).
  void cancel_all();
  size_t in_flight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::worker
