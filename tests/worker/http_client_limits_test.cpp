// The HTTP client's bounds on what a reply may hold (target.max_response_bytes): a body, an SSE
// line, a stream's reply text, and the response header.
#include "http_client_test_util.hpp"
#include "worker/http_client.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <map>
#include <string>

using convoy::proto::ErrorKind;
using convoy::test::CannedReply;
using convoy::test::chat_chunk;
using convoy::test::chat_request;
using convoy::test::ClientHarness;
using convoy::test::json_reply;
using convoy::test::kDone;
using convoy::test::kRoleChunk;
using convoy::test::ReplyEnd;
using convoy::test::TestServer;
using convoy::worker::HttpRequest;
using convoy::worker::HttpResponse;

namespace {

constexpr size_t kClientLimit = 1u << 20;  // a small max_response_bytes, so the tests stay quick

// A non-streaming chat body whose content is `content_bytes` of 'x'.
std::string chat_body(size_t content_bytes) {
  return "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" +
         std::string(content_bytes, 'x') + "\"}}],\"usage\":{\"prompt_tokens\":3}}";
}

// `body` sent as chunks of 64 KiB: no Content-Length, so the client learns the size as it reads.
CannedReply chunked_json(const std::string& body) {
  CannedReply r;
  r.content_type = "application/json";
  for (size_t off = 0; off < body.size(); off += 64u << 10) {
    r.steps.push_back({0, body.substr(off, 64u << 10)});
  }
  return r;
}

HttpRequest bounded_request(const TestServer& server, const std::string& path, bool streaming) {
  HttpRequest req = chat_request(server, path);
  req.streaming = streaming;
  req.max_response_bytes = kClientLimit;
  return req;
}

}  // namespace

TEST_CASE("http: the default max_response_bytes is 64 MiB") {
  CHECK(HttpRequest{}.max_response_bytes == 64u << 20);
  CHECK(convoy::proto::WorkerSettings{}.max_response_bytes == 64 << 20);
  CHECK(convoy::proto::to_string(ErrorKind::kResponseTooLarge) == "response_too_large");
}

TEST_CASE("http: a reply body just over max_response_bytes fails as response_too_large") {
  std::map<std::string, CannedReply> replies;
  const std::string over = chat_body(kClientLimit);  // the JSON around it makes it just over
  REQUIRE(over.size() > kClientLimit);
  REQUIRE(over.size() < kClientLimit + 200);
  replies["/chunked"] = chunked_json(over);
  replies["/sized"] = json_reply("200 OK", over);
  replies["/sized"].end = ReplyEnd::kClose;
  TestServer server(replies);
  ClientHarness h;
  SUBCASE("chunked: reading stops at the limit, and nothing past it is buffered") {
    const HttpResponse r = h.run(bounded_request(server, "/chunked", false));
    CHECK(r.error.kind == ErrorKind::kResponseTooLarge);
    CHECK(r.error.message.find("max_response_bytes") != std::string::npos);
    CHECK(r.http_status == 200);
    CHECK(r.request_reached_server);
    CHECK(r.max_buffered_bytes > 0);
    CHECK(r.max_buffered_bytes <= kClientLimit);
    CHECK(r.reply_text.empty());
  }
  SUBCASE("with a Content-Length over the limit: fails before a byte is kept") {
    const HttpResponse r = h.run(bounded_request(server, "/sized", false));
    CHECK(r.error.kind == ErrorKind::kResponseTooLarge);
    CHECK(r.error.message.find("Content-Length") != std::string::npos);
    CHECK(r.max_buffered_bytes == 0);
  }
  SUBCASE("a server that ignores stream: true is bounded the same way") {
    const HttpResponse r = h.run(bounded_request(server, "/chunked", true));
    CHECK(r.error.kind == ErrorKind::kResponseTooLarge);
    CHECK(r.max_buffered_bytes <= kClientLimit);
  }
}

TEST_CASE("http: a reply body under max_response_bytes succeeds") {
  std::map<std::string, CannedReply> replies;
  const std::string under = chat_body(kClientLimit - 200);
  REQUIRE(under.size() <= kClientLimit);
  replies["/chunked"] = chunked_json(under);
  replies["/sized"] = json_reply("200 OK", under);
  TestServer server(replies);
  ClientHarness h;
  for (const std::string path : {"/chunked", "/sized"}) {
    INFO(path);
    const HttpResponse r = h.run(bounded_request(server, path, false));
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.reply_text.size() == kClientLimit - 200);
    CHECK(r.max_buffered_bytes >= under.size());
    CHECK(r.max_buffered_bytes <= kClientLimit);
  }
}

TEST_CASE("http: an SSE line that never ends stops at max_response_bytes") {
  std::map<std::string, CannedReply> replies;
  CannedReply endless;  // one data line, no newline, 4x the limit in 64 KiB pieces
  endless.steps = {{0, kRoleChunk + "data: "}};
  for (int i = 0; i < 64; ++i) endless.steps.push_back({0, std::string(64u << 10, 'x')});
  replies["/endless-line"] = endless;
  TestServer server(replies);
  ClientHarness h;
  const HttpResponse r = h.run(bounded_request(server, "/endless-line", true));
  CHECK(r.error.kind == ErrorKind::kResponseTooLarge);
  CHECK(r.error.message.find("SSE") != std::string::npos);
  // The line buffer stays within the limit; the event buffer only held the role chunk.
  CHECK(r.max_buffered_bytes <= kClientLimit + 4096);
}

TEST_CASE("http: a stream whose reply text outgrows max_response_bytes fails") {
  std::map<std::string, CannedReply> replies;
  CannedReply many;  // 2x the limit of content, in 4 KiB tokens
  many.steps = {{0, kRoleChunk}};
  for (size_t sent = 0; sent < 2 * kClientLimit; sent += 4096) {
    many.steps.push_back({0, chat_chunk(std::string(4096, 'y'))});
  }
  many.steps.push_back({0, kDone});
  replies["/many"] = many;
  TestServer server(replies);
  ClientHarness h;
  SUBCASE("over the limit") {
    const HttpResponse r = h.run(bounded_request(server, "/many", true));
    CHECK(r.error.kind == ErrorKind::kResponseTooLarge);
    CHECK(r.error.message.find("reply text") != std::string::npos);
    CHECK(r.reply_text.size() > kClientLimit);
    CHECK(r.reply_text.size() <= kClientLimit + 4096);  // it stopped at the event that crossed it
  }
  SUBCASE("under the limit the same stream is fine") {
    HttpRequest req = bounded_request(server, "/many", true);
    req.max_response_bytes = 4 * kClientLimit;
    const HttpResponse ok = h.run(req);
    CHECK(ok.error.kind == ErrorKind::kNone);
    CHECK(ok.reply_text.size() >= 2 * kClientLimit);
  }
}

TEST_CASE("http: a response header over libcurl's limit says so") {
  std::map<std::string, CannedReply> replies;
  CannedReply huge = json_reply("200 OK", chat_body(10));
  huge.extra_head = "X-Huge: " + std::string(4u << 20, 'h') + "\r\n";  // 4 MB
  huge.end = ReplyEnd::kClose;
  replies["/huge-header"] = huge;
  TestServer server(replies);
  ClientHarness h;
  const HttpResponse r = h.run(bounded_request(server, "/huge-header", false));
  INFO(r.error.message);
  CHECK(r.error.kind == ErrorKind::kResponseTooLarge);
  CHECK(r.error.message.find("response header larger than libcurl's limit") == 0);
  CHECK(r.request_reached_server);
}
