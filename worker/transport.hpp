// The seam between the conversation runner and HTTP: what a request is, what came back, and the
// four operations the runner and the worker use (start with a completion callback, cancel one,
// cancel all, count in flight). HttpClient (worker/http_client.hpp) is the real one; tests drive
// the runner and the worker with a fake (tests/worker/fake_transport.hpp). Like h2load's Session,
// a handful of virtuals chosen once: one virtual call per request, nothing per byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proto/messages.hpp"

namespace convoy::worker {

struct HttpRequest {
  std::string url;                   // full url, e.g. http://127.0.0.1:8000/v1/chat/completions
  std::vector<std::string> headers;  // "Name: value" lines (Content-Type is added when absent)
  std::string body;                  // JSON
  proto::Endpoint endpoint = proto::Endpoint::kChat;  // where content lives in the reply
  bool streaming = true;                              // parse the reply as SSE
  double request_timeout_s = 600;                     // whole request
  double connect_timeout_s = 10;
  bool http2 = false;
  bool insecure = false;        // skip TLS verification
  double cancel_after_ms = -1;  // >= 0: cancel the transfer this long after sending (injection)
  // target.max_response_bytes: a non-streamed body, one SSE line or event, or a stream's reply
  // text larger than this fails the request as kResponseTooLarge; nothing buffers beyond it.
  size_t max_response_bytes = 64u << 20;
  // Called once, from inside the transfer's read (no transport call may be made from it), when
  // the first content of a streamed reply arrives; empty: nothing to call.
  std::function<void()> on_first_token;
};

// What came back. Its Timings are steady_now_ns(); 0 = did not happen.
struct HttpResponse : proto::Timings {
  int64_t content_events = 0;  // non-empty content events (token count fallback)
  std::string reply_text;      // concatenated content (live history)
  // Reasoning models: the events that carried reasoning (token count fallback) and the server's
  // completion_tokens_details.reasoning_tokens (-1: not reported).
  int64_t reasoning_events = 0;
  int64_t reasoning_tokens = -1;
  // usage, when the server sent it
  bool has_usage = false;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = -1;  // -1: not reported
  // session_routing.verify: the serving worker from the reply's nvext.worker_id (the first
  // event that carries one, in a stream); "" / -1: not reported.
  std::string served_by;
  int64_t dp_rank = -1;
  // target.server_timing: the server's own timing (nvext.timing; the first event with one).
  proto::ServerTiming server_timing;
  // responses: the response's id (previous_response_id of the next turn with
  // target.responses_state server); messages: the message id. "": not reported.
  std::string response_id;
  int64_t http_status = 0;
  proto::RecordError error;             // kind kNone on success
  bool request_reached_server = false;  // false for dns/connect/tls/send failures
  // The most memory this reply's buffers held at once (body, or SSE line and event buffers,
  // by capacity): at most max_response_bytes (the SSE buffers: each at most that).
  size_t max_buffered_bytes = 0;
};

// The contract every implementation keeps (the runner's correctness rests on it):
// - `done` runs exactly once per started request, always from the event loop and never inside
//   start() (a request that cannot even be started fails on the next iteration);
// - cancel(id) ends that request: its `done` runs with error kind kCancelled on a later loop
//   iteration, and in_flight() counts it until then; unknown or finished ids are a no-op;
// - inside `done` the caller may start and cancel other requests;
// - destroying the transport abandons everything in flight without calling any callback.
class Transport {
 public:
  using RequestId = uint64_t;
  using DoneCallback = std::function<void(HttpResponse&&)>;

  virtual ~Transport() = default;

  virtual RequestId start(HttpRequest request, DoneCallback done) = 0;
  virtual void cancel(RequestId id) = 0;
  virtual void cancel_all() = 0;  // cancel() for every request in flight
  // Started requests whose `done` has not run yet.
  virtual size_t in_flight() const = 0;

 protected:
  Transport() = default;
  Transport(const Transport&) = default;
  Transport& operator=(const Transport&) = default;
};

}  // namespace convoy::worker
