// One HTTP request's state inside HttpClient, and the assembly of its reply: the bytes curl
// delivers are read as SSE events, a JSON body or an error body, each content event stamped with
// the steady time of its read, and the finished transfer is classified into an HttpResponse.
// HttpClient (worker/http_client.cpp) drives the transfers; this file reads what they bring.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/curl_handle.hpp"
#include "worker/event_loop.hpp"
#include "worker/reply_parser.hpp"
#include "worker/sse_parser.hpp"
#include "worker/transport.hpp"

namespace convoy::worker {

// How the reply's bytes are read, decided at its first body byte.
enum class BodyMode : uint8_t { kUnknown, kSse, kBody, kErrorBody };

// One request's state. Transfers are pooled (a request then costs no allocation once a few have
// run): a finished one goes back to its slot with its easy handle, header nodes and parser
// buffers, and the next request reuses them.
struct Transfer {
  Transport::RequestId id = 0;
  uint32_t slot = 0;                 // its place in HttpClient::Impl::slots
  const int64_t* read_ns = nullptr;  // the client's stamp of the read being processed
  CurlEasy easy;
  // CURLOPT_HTTPHEADER's list: nodes of our own over the lines of `request.headers` (see
  // link_headers()).
  std::vector<curl_slist> header_nodes;
  HttpRequest request;  // owns the body curl sends from
  Transport::DoneCallback done;
  HttpResponse response;
  Endpoint endpoint = Endpoint::kChat;
  BodyMode mode = BodyMode::kUnknown;
  SseParser sse;
  std::string body;  // non-streaming reply, or the body of a non-2xx reply
  bool saw_done = false;
  bool attached = false;  // added to the multi handle
  EventLoop::TimerId cancel_timer = 0;
  char error_buffer[CURL_ERROR_SIZE] = {};
};

// Records the request's error; the first one recorded wins.
void set_transfer_error(HttpResponse& r, proto::ErrorKind kind, std::string message,
                        int64_t code = 0, std::string type = {});

// CURLOPT_WRITEFUNCTION's work: reads `n` reply bytes at the time of the current read
// (*t.read_ns). Returns n to go on, 0 to abort the transfer (the reason is in t.response).
size_t read_reply_bytes(Transfer& t, const char* data, size_t n) noexcept;

// The transfer finished with `code`: stamps its end, classifies it (classify_curl_result) and
// reads a non-streamed body. Errors recorded while reading came first and win.
void finish_reply(Transfer& t, CURLcode code);

}  // namespace convoy::worker
