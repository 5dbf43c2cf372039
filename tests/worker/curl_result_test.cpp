// classify_curl_result: every row of docs/worker.md's error table from the facts alone (curl's
// code, the status, what was received), with no transfer, server or clock.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "worker/curl_result.hpp"

using convoy::proto::ErrorKind;
using convoy::worker::classify_curl_result;
using convoy::worker::CurlOutcome;
using convoy::worker::reached_server;

namespace {

struct Row {
  const char* name;
  CurlOutcome outcome;
  ErrorKind kind;
};

CurlOutcome of(CURLcode code, bool got_bytes, bool request_sent) {
  CurlOutcome o;
  o.code = code;
  o.curl_message = "curl says no";
  o.got_bytes = got_bytes;
  o.request_sent = request_sent;
  return o;
}

CurlOutcome status(int64_t http_status, CURLcode code = CURLE_OK) {
  CurlOutcome o = of(code, true, true);
  o.http_status = http_status;
  o.body_started = true;
  return o;
}

CurlOutcome stream(bool saw_done) {
  CurlOutcome o = status(200);
  o.read_as_stream = true;
  o.saw_done = saw_done;
  return o;
}

}  // namespace

TEST_CASE("curl result: each code, status and progress maps to its error kind") {
  const std::vector<Row> rows = {
      {"a whole body", status(200), ErrorKind::kNone},
      {"a stream with [DONE]", stream(true), ErrorKind::kNone},
      {"a stream without [DONE]", stream(false), ErrorKind::kStreamDisconnected},
      {"an empty streamed 200",
       [] {
         CurlOutcome o = status(200);
         o.read_as_stream = true;
         o.body_started = false;
         return o;
       }(),
       ErrorKind::kStreamDisconnected},
      {"429", status(429), ErrorKind::kHttpStatus},
      {"503 cut short", status(503, CURLE_RECV_ERROR), ErrorKind::kHttpStatus},
      {"1xx left over", status(101), ErrorKind::kHttpStatus},
      {"dns", of(CURLE_COULDNT_RESOLVE_HOST, false, false), ErrorKind::kDns},
      {"dns of the proxy", of(CURLE_COULDNT_RESOLVE_PROXY, false, false), ErrorKind::kDns},
      {"connect refused", of(CURLE_COULDNT_CONNECT, false, false), ErrorKind::kConnect},
      {"timeout before sending", of(CURLE_OPERATION_TIMEDOUT, false, false), ErrorKind::kConnect},
      {"timeout before the first byte", of(CURLE_OPERATION_TIMEDOUT, false, true),
       ErrorKind::kTimeoutBeforeFirstByte},
      {"timeout mid-stream", of(CURLE_OPERATION_TIMEDOUT, true, true),
       ErrorKind::kTimeoutMidStream},
      {"send error", of(CURLE_SEND_ERROR, false, false), ErrorKind::kSend},
      {"send error after a reply byte", of(CURLE_SEND_ERROR, true, true),
       ErrorKind::kStreamDisconnected},
      {"recv error before sending", of(CURLE_RECV_ERROR, false, false), ErrorKind::kSend},
      {"recv error after sending", of(CURLE_RECV_ERROR, false, true),
       ErrorKind::kStreamDisconnected},
      {"partial file", of(CURLE_PARTIAL_FILE, true, true), ErrorKind::kStreamDisconnected},
      {"got nothing", of(CURLE_GOT_NOTHING, false, true), ErrorKind::kStreamDisconnected},
      {"http2 framing", of(CURLE_HTTP2, true, true), ErrorKind::kStreamDisconnected},
      {"http2 stream", of(CURLE_HTTP2_STREAM, true, true), ErrorKind::kStreamDisconnected},
      {"tls handshake", of(CURLE_SSL_CONNECT_ERROR, false, false), ErrorKind::kTls},
      {"peer verification", of(CURLE_PEER_FAILED_VERIFICATION, false, false), ErrorKind::kTls},
      {"ca file", of(CURLE_SSL_CACERT_BADFILE, false, false), ErrorKind::kTls},
      {"header over curl's limit", of(CURLE_OUT_OF_MEMORY, true, true),
       ErrorKind::kResponseTooLarge},
      {"out of memory in the body",
       [] {
         CurlOutcome o = of(CURLE_OUT_OF_MEMORY, true, true);
         o.body_started = true;
         return o;
       }(),
       ErrorKind::kOther},
      {"out of memory before sending", of(CURLE_OUT_OF_MEMORY, false, false), ErrorKind::kOther},
      {"bad url", of(CURLE_URL_MALFORMAT, false, false), ErrorKind::kOther},
      {"write aborted", of(CURLE_WRITE_ERROR, true, true), ErrorKind::kOther},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    CHECK(classify_curl_result(row.outcome).kind == row.kind);
  }
}

TEST_CASE("curl result: a non-2xx status wins over curl's code and keeps the server's message") {
  CurlOutcome o = status(429, CURLE_PARTIAL_FILE);
  o.error_body = R"({"error":{"message":"slow down","type":"rate_limit","code":429}})";
  const auto e = classify_curl_result(o);
  CHECK(e.kind == ErrorKind::kHttpStatus);
  CHECK(e.code == 429);
  CHECK(e.message == "slow down");
  CHECK(e.type == "rate_limit");

  const auto bare = classify_curl_result(status(502));
  CHECK(bare.message == "HTTP 502");
  CHECK(bare.code == 502);
}

TEST_CASE("curl result: curl failures carry curl's message") {
  CHECK(classify_curl_result(of(CURLE_COULDNT_CONNECT, false, false)).message == "curl says no");
  CHECK(classify_curl_result(stream(false)).message == "stream ended without [DONE]");
  const std::string header = classify_curl_result(of(CURLE_OUT_OF_MEMORY, true, true)).message;
  CHECK(header.rfind("response header larger than libcurl's limit (", 0) == 0);
  CHECK(header.find("curl said: curl says no") != std::string::npos);
  CHECK(classify_curl_result(status(200)).message.empty());
}

TEST_CASE("curl result: only failures before the request left the client did not reach it") {
  for (ErrorKind kind : {ErrorKind::kDns, ErrorKind::kConnect, ErrorKind::kTls, ErrorKind::kSend}) {
    CHECK_FALSE(reached_server(kind));
  }
  for (ErrorKind kind :
       {ErrorKind::kNone, ErrorKind::kHttpStatus, ErrorKind::kTimeoutBeforeFirstByte,
        ErrorKind::kTimeoutMidStream, ErrorKind::kStreamDisconnected, ErrorKind::kMalformedEvent,
        ErrorKind::kResponseTooLarge, ErrorKind::kServerErrorEvent, ErrorKind::kOther}) {
    CHECK(reached_server(kind));
  }
}
