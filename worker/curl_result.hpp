// How a finished transfer is classified: libcurl's result code, the HTTP status and what was
// received -> the record's error kind and message. A pure function of those facts (no curl
// handle, no clock), so every row of docs/worker.md's error table is a unit test.
#pragma once

#include <curl/curl.h>

#include <string_view>

#include "proto/messages.hpp"

namespace convoy::worker {

// What the client knew about a transfer when curl reported it done.
struct CurlOutcome {
  CURLcode code = CURLE_OK;
  std::string_view curl_message;  // curl's error buffer, or curl_easy_strerror(code)
  int64_t http_status = 0;        // 0: no status line arrived
  bool got_bytes = false;         // any response byte arrived (the status line counts)
  bool request_sent = false;      // curl wrote request bytes (CURLINFO_REQUEST_SIZE > 0)
  bool body_started = false;      // a body byte arrived (the body's reading mode was decided)
  bool read_as_stream = false;    // streaming asked for and the reply was not read as one body
  bool saw_done = false;          // the stream's `data: [DONE]` arrived
  std::string_view error_body;    // the body of a non-2xx reply (its first 64 KiB)
};

// The error a finished transfer ends with; kind kNone when curl and the status say it
// succeeded (a non-streamed body is then still to be parsed, which may fail it). Errors the
// client found while reading (malformed or error events) came first and win over this.
proto::RecordError classify_curl_result(const CurlOutcome& outcome);

// Whether the server can have seen the request: false for failures before it left the client
// (dns, connect, tls, send), so session state the request would have created can be rolled
// back.
bool reached_server(proto::ErrorKind kind);

// libcurl's TLS failures (CURLE_SSL_*, peer verification).
bool is_tls_error(CURLcode code);

}  // namespace convoy::worker
