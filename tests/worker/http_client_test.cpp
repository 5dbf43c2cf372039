// The HTTP client (worker/http_client.hpp) against the test server of http_client_test_util.hpp:
// streamed and whole replies, error statuses, transport failures, timeouts, stream errors,
// cancellation, kept-alive connections and concurrent streams, and transfers reused across
// requests. The max_response_bytes bounds are in http_client_limits_test.cpp.
#include "worker/http_client.hpp"
#include "http_client_test_util.hpp"
#include "test_time.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <utility>

using convoy::steady_now_ns;
using convoy::proto::ErrorKind;
using convoy::test::canned_replies;
using convoy::test::CannedReply;
using convoy::test::chat_chunk;
using convoy::test::chat_request;
using convoy::test::client_run_until;
using convoy::test::ClientHarness;
using convoy::test::kDone;
using convoy::test::kGapMs;
using convoy::test::kRoleChunk;
using convoy::test::TestServer;
using convoy::worker::EventLoop;
using convoy::worker::HttpClient;
using convoy::worker::HttpRequest;
using convoy::worker::HttpResponse;

TEST_CASE("http: a streamed chat reply is timed, counted and parsed") {
  TestServer server(canned_replies());
  ClientHarness h;
  const HttpResponse r = h.run(chat_request(server, "/stream"));
  CHECK(r.error.kind == ErrorKind::kNone);
  CHECK(r.http_status == 200);
  CHECK(r.request_reached_server);
  CHECK(r.reply_text == "Hello, world! Bye");
  CHECK(r.content_events == 5);
  CHECK(r.sent_ns > 0);
  CHECK(r.sent_ns <= r.first_byte_ns);
  CHECK(r.first_byte_ns <= r.first_token_ns);
  // One read may carry the first two tokens on a busy machine: they then share its timestamp.
  CHECK(r.first_token_ns <= r.second_token_ns);
  CHECK(r.second_token_ns <= r.last_token_ns);
  CHECK(r.last_token_ns <= r.end_ns);
  // The server paused kGapMs before each of the last four tokens. A busy machine may coalesce
  // tokens into one read (a gap of 0), but the last one cannot arrive before the pauses ended.
  CHECK(r.last_token_ns - r.sent_ns >= 4 * kGapMs * kMs);
  REQUIRE(r.chunk_gaps_ns.size() == 4);
  int64_t sum = 0;
  for (const int64_t gap : r.chunk_gaps_ns) {
    CHECK(gap >= 0);
    sum += gap;
  }
  CHECK(sum == r.last_token_ns - r.first_token_ns);
  CHECK(r.has_usage);
  CHECK(r.prompt_tokens == 12);
  CHECK(r.completion_tokens == 5);
  CHECK(r.cached_tokens == 8);

  const auto seen = server.last_request();
  CHECK(seen.method == "POST");
  CHECK(seen.body == "{\"model\":\"m\",\"stream\":true}");
  CHECK(seen.head.find("Content-Type: application/json") != std::string::npos);
  CHECK(seen.head.find("X-Request-ID: r-1") != std::string::npos);
  CHECK(seen.head.find("Expect") == std::string::npos);
}

TEST_CASE("http: verify reads the serving worker from a stream and from a whole body") {
  TestServer server(canned_replies());
  ClientHarness h;
  SUBCASE("stream") {
    const HttpResponse r = h.run(chat_request(server, "/verify-stream"));
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.reply_text == "vv");
    CHECK(r.served_by == "1003");
    CHECK(r.dp_rank == 1);
  }
  SUBCASE("body") {
    HttpRequest req = chat_request(server, "/verify-body");
    req.streaming = false;
    const HttpResponse r = h.run(std::move(req));
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.served_by == "18446744073709551615");
    CHECK(r.dp_rank == 0);
  }
  SUBCASE("a reply without nvext names nobody") {
    const HttpResponse r = h.run(chat_request(server, "/stream"));
    CHECK(r.served_by.empty());
    CHECK(r.dp_rank == -1);
  }
}

TEST_CASE("http: endpoints and reply shapes") {
  TestServer server(canned_replies());
  ClientHarness h;
  SUBCASE("completions stream text") {
    auto req = chat_request(server, "/completions");
    req.endpoint = convoy::proto::Endpoint::kCompletions;
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.reply_text == "once upon");
    CHECK(r.content_events == 2);
    CHECK_FALSE(r.has_usage);
    CHECK(r.cached_tokens == -1);
  }
  SUBCASE("reasoning content counts for timing but not for the reply text") {
    const HttpResponse r = h.run(chat_request(server, "/reasoning"));
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.content_events == 2);
    CHECK(r.reply_text == "ok");
  }
  SUBCASE("a non-streaming chat body") {
    auto req = chat_request(server, "/nonstream");
    req.streaming = false;
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.reply_text == "Hi there");
    CHECK(r.first_token_ns == 0);  // no TTFT without a stream
    CHECK(r.last_token_ns == 0);
    CHECK(r.first_output_token_ns == 0);
    CHECK(r.content_events == 1);
    CHECK(r.prompt_tokens == 3);
    CHECK(r.completion_tokens == 2);
  }
  SUBCASE("embeddings count their data entries") {
    auto req = chat_request(server, "/embeddings");
    req.streaming = false;
    req.endpoint = convoy::proto::Endpoint::kEmbeddings;
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.content_events == 2);
    CHECK(r.prompt_tokens == 4);
  }
  SUBCASE("a server that ignores stream:true is read as one JSON body") {
    const HttpResponse r = h.run(chat_request(server, "/ignores-stream"));
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.reply_text == "Hi there");
  }
}

TEST_CASE("http: reasoning chunks time the first token and the first output token apart") {
  TestServer server(canned_replies());
  ClientHarness h;
  const HttpResponse r = h.run(chat_request(server, "/think-then-answer"));
  CHECK(r.error.kind == ErrorKind::kNone);
  CHECK(r.reply_text == "c");  // reasoning stays out of the live history
  CHECK(r.content_events == 3);
  CHECK(r.reasoning_events == 2);
  CHECK(r.reasoning_tokens == 2);
  REQUIRE(r.first_token_ns > 0);
  CHECK(r.first_output_token_ns > r.first_token_ns);
  CHECK(r.first_output_token_ns == r.last_token_ns);
}

TEST_CASE("http: error statuses carry the server's message") {
  TestServer server(canned_replies());
  ClientHarness h;
  SUBCASE("OpenAI shape") {
    const HttpResponse r = h.run(chat_request(server, "/openai-429"));
    CHECK(r.error.kind == ErrorKind::kHttpStatus);
    CHECK(r.error.code == 429);
    CHECK(r.http_status == 429);
    CHECK(r.error.type == "rate_limit_error");
    CHECK(r.error.message == "Rate limit reached");
    CHECK(r.request_reached_server);
  }
  SUBCASE("Dynamo shape") {
    const HttpResponse r = h.run(chat_request(server, "/dynamo-503"));
    CHECK(r.error.kind == ErrorKind::kHttpStatus);
    CHECK(r.error.code == 503);
    CHECK(r.error.type == "Service Unavailable");
    CHECK(r.error.message == "no instances of worker");
  }
  SUBCASE("plain text is kept, trimmed") {
    const HttpResponse r = h.run(chat_request(server, "/text-500"));
    CHECK(r.error.kind == ErrorKind::kHttpStatus);
    CHECK(r.error.code == 500);
    CHECK(r.error.message == std::string(500, 'x'));
  }
  SUBCASE("unknown path") {
    const HttpResponse r = h.run(chat_request(server, "/nope"));
    CHECK(r.error.kind == ErrorKind::kHttpStatus);
    CHECK(r.error.code == 404);
    CHECK(r.error.message == "no such path");
  }
}

TEST_CASE("http: transport failures") {
  ClientHarness h;
  SUBCASE("connection refused is connect, and never reached the server") {
    int port = 0;
    {  // a port that was free a moment ago and has no listener now
      TestServer closed({});
      const std::string url = closed.url("");
      port = std::stoi(url.substr(url.rfind(':') + 1));
    }
    HttpRequest req;
    req.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions";
    req.body = "{}";
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kConnect);
    CHECK_FALSE(r.request_reached_server);
    CHECK_FALSE(r.error.message.empty());
    CHECK(r.first_byte_ns == 0);
  }
  SUBCASE("a connect that does not complete in connect_timeout_s is connect") {
    // A listener whose accept queue (backlog 0: one connection) is already full: the kernel
    // drops further SYNs, so a connect hangs until the client gives up.
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener, 0) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    const int filler = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(::connect(filler, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    HttpRequest req;
    req.url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1/chat/completions";
    req.body = "{}";
    req.connect_timeout_s = 0.3;
    req.request_timeout_s = 10;
    const HttpResponse r = h.run(req);
    ::close(filler);
    ::close(listener);
    CHECK(r.error.kind == ErrorKind::kConnect);
    CHECK_FALSE(r.request_reached_server);
    CHECK(r.end_ns - r.sent_ns >= 250 * kMs);
    CHECK(r.end_ns - r.sent_ns < 5000 * kMs);  // the connect timeout, not the request timeout
  }
  SUBCASE("a url curl cannot use fails later, from the loop") {
    HttpRequest req;
    req.url = "gopher://127.0.0.1/";
    bool called = false;
    h.client.start(req, [&](HttpResponse&& r) {
      called = true;
      CHECK(r.error.kind == ErrorKind::kOther);
    });
    CHECK_FALSE(called);
    REQUIRE(client_run_until(h.loop, [&] { return called; }));
  }
}

TEST_CASE("http: a name that does not resolve is a dns error") {
  // In a network namespace of its own (loopback only, and down) no DNS server is reachable,
  // so the lookup fails at once whatever the machine's resolver is. The request runs in a
  // forked child that reports the error kind as its exit status. Needs root; skips otherwise.
  if (::geteuid() != 0) {
    MESSAGE("skipped: a network namespace needs root");
    return;
  }
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNET) != 0) ::_exit(100);
    int kind = 101;
    {
      EventLoop loop;
      HttpClient client(loop);
      HttpRequest req;
      req.url = "http://convoy-no-such-host.invalid/v1/chat/completions";
      req.body = "{}";
      req.connect_timeout_s = 5;
      bool done = false;
      client.start(std::move(req), [&](HttpResponse&& r) {
        kind = r.request_reached_server ? 102 : static_cast<int>(r.error.kind);
        done = true;
      });
      const int64_t deadline = steady_now_ns() + 10'000 * kMs;
      while (!done && steady_now_ns() < deadline) loop.run_once(deadline - steady_now_ns());
    }
    ::_exit(kind);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  REQUIRE_MESSAGE(code != 100, "unshare(CLONE_NEWNET) failed as root");
  CHECK(code == static_cast<int>(ErrorKind::kDns));
}

TEST_CASE("http: timeouts split by whether a byte arrived") {
  TestServer server(canned_replies());
  ClientHarness h;
  SUBCASE("before the first byte") {
    auto req = chat_request(server, "/hold-before");
    req.request_timeout_s = 0.2;
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kTimeoutBeforeFirstByte);
    CHECK(r.request_reached_server);
    CHECK(r.end_ns - r.sent_ns >= 190 * kMs);
  }
  SUBCASE("mid stream") {
    auto req = chat_request(server, "/hold-mid");
    req.request_timeout_s = 0.2;
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kTimeoutMidStream);
    CHECK(r.first_token_ns != 0);
    CHECK(r.reply_text == "first");
  }
}

TEST_CASE("http: stream errors") {
  TestServer server(canned_replies());
  ClientHarness h;
  SUBCASE("a stream that ends without [DONE] is disconnected") {
    const HttpResponse r = h.run(chat_request(server, "/no-done"));
    CHECK(r.error.kind == ErrorKind::kStreamDisconnected);
    CHECK(r.content_events == 2);
  }
  SUBCASE("a connection closed mid-body is disconnected") {
    const HttpResponse r = h.run(chat_request(server, "/abort"));
    CHECK(r.error.kind == ErrorKind::kStreamDisconnected);
    CHECK(r.request_reached_server);
  }
  SUBCASE("a data payload that is not JSON is malformed, and ends the transfer") {
    const HttpResponse r = h.run(chat_request(server, "/malformed"));
    CHECK(r.error.kind == ErrorKind::kMalformedEvent);
    CHECK(r.reply_text == "a");
  }
  SUBCASE("data: {\"error\": ...} is a server error event") {
    const HttpResponse r = h.run(chat_request(server, "/error-data"));
    CHECK(r.error.kind == ErrorKind::kServerErrorEvent);
    CHECK(r.error.message == "engine died");
    CHECK(r.error.type == "internal_error");
    CHECK(r.error.code == 500);
    CHECK(r.http_status == 200);
  }
  SUBCASE("event: error is a server error event") {
    const HttpResponse r = h.run(chat_request(server, "/error-event"));
    CHECK(r.error.kind == ErrorKind::kServerErrorEvent);
    CHECK(r.error.message == "overloaded");
    CHECK(r.error.type == "busy");
  }
}

TEST_CASE("http: cancellation") {
  TestServer server(canned_replies());
  ClientHarness h;
  SUBCASE("cancel runs done later, from the loop, with kCancelled") {
    HttpResponse out;
    int calls = 0;
    const auto id = h.client.start(chat_request(server, "/hold-mid"), [&](HttpResponse&& r) {
      out = std::move(r);
      ++calls;
    });
    REQUIRE(client_run_until(h.loop, [&] { return server.requests() == 1; }));
    h.client.cancel(id);
    CHECK(calls == 0);
    h.client.cancel(id);  // twice: a no-op
    REQUIRE(client_run_until(h.loop, [&] { return calls > 0; }));
    CHECK(calls == 1);
    CHECK(out.error.kind == ErrorKind::kCancelled);
    CHECK(out.request_reached_server);
    CHECK(h.client.in_flight() == 0);
  }
  SUBCASE("cancel_after_ms cancels from a loop timer") {
    auto req = chat_request(server, "/hold-mid");
    req.cancel_after_ms = 50;
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kCancelled);
    CHECK(r.end_ns - r.sent_ns >= 50 * kMs);
    CHECK(r.reply_text == "first");
  }
  SUBCASE("cancel_after_ms longer than the reply changes nothing") {
    auto req = chat_request(server, "/fast");
    req.cancel_after_ms = 5000;
    const HttpResponse r = h.run(req);
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(h.loop.timer_count() <= 1);  // at most curl's own timer is left
  }
  SUBCASE("cancel_all cancels everything in flight") {
    int cancelled = 0;
    for (int i = 0; i < 3; ++i) {
      h.client.start(chat_request(server, "/hold-before"), [&](HttpResponse&& r) {
        if (r.error.kind == ErrorKind::kCancelled) ++cancelled;
      });
    }
    REQUIRE(client_run_until(h.loop, [&] { return server.requests() == 3; }));
    h.client.cancel_all();
    CHECK(h.client.in_flight() == 3);  // until the callbacks have run
    REQUIRE(client_run_until(h.loop, [&] { return cancelled == 3; }));
    CHECK(h.client.in_flight() == 0);
  }
  SUBCASE("destroying the client with transfers in flight calls nothing") {
    int calls = 0;
    {
      HttpClient client(h.loop);
      client.start(chat_request(server, "/hold-before"), [&](HttpResponse&&) { ++calls; });
      REQUIRE(client_run_until(h.loop, [&] { return server.requests() == 1; }));
    }
    h.loop.run_once(10 * kMs);
    CHECK(calls == 0);
  }
}

TEST_CASE("http: connections are kept alive and reused") {
  TestServer server(canned_replies());
  ClientHarness h;
  int ok = 0;
  int started = 0;
  std::function<void()> next = [&] {
    ++started;
    h.client.start(chat_request(server, "/fast"), [&](HttpResponse&& r) {
      if (r.error.kind == ErrorKind::kNone) ++ok;
      if (started < 5) next();  // the next turn starts from the done callback
    });
  };
  next();
  REQUIRE(client_run_until(h.loop, [&] { return ok == 5; }));
  CHECK(server.requests() == 5);
  CHECK(server.accepts() == 1);
}

TEST_CASE("http: a kept-alive connection the server closes while idle is replaced") {
  // The idle connection stays registered in the loop between requests (parked); the server's
  // close must unregister it without spinning the loop, and the next request must reconnect.
  TestServer server(canned_replies());
  ClientHarness h;
  int ok = 0;
  for (int i = 1; i <= 3; ++i) {
    h.client.start(chat_request(server, "/fast-idle-close"), [&](HttpResponse&& r) {
      if (r.error.kind == ErrorKind::kNone && r.reply_text == "ab") ++ok;
    });
    REQUIRE(client_run_until(h.loop, [&] { return ok == i; }));
    // Let the server's close arrive while the connection sits idle in curl's cache.
    int iterations = 0;
    const int64_t until = steady_now_ns() + 100 * kMs;
    while (steady_now_ns() < until) {
      h.loop.run_once(until - steady_now_ns());
      ++iterations;
    }
    CHECK_MESSAGE(iterations < 50, "the loop spun on a closed idle connection");
  }
  CHECK(server.accepts() == 3);
  CHECK(server.requests() == 3);
}

TEST_CASE("http: a target named by host name reconnects and reuses connections cleanly") {
  // "localhost" goes through curl's threaded resolver (it opens its socketpair) rather than a
  // numeric address; the idle closes make fd numbers be reused by new connections. Here the
  // name resolves at once, so curl never asks to watch the socketpair: the guard that keeps
  // such descriptors from being parked (http_client.cpp) is not exercised by this test.
  TestServer server(canned_replies());
  ClientHarness h;
  int ok = 0;
  const char* paths[] = {"/fast-idle-close", "/fast-idle-close", "/fast", "/fast", "/fast"};
  for (const char* path : paths) {
    HttpRequest req = chat_request(server, path);
    req.url = server.url(path, "localhost");
    const int before = ok;
    h.client.start(std::move(req), [&](HttpResponse&& r) {
      if (r.error.kind == ErrorKind::kNone && r.reply_text == "ab") ++ok;
    });
    REQUIRE(client_run_until(h.loop, [&] { return ok == before + 1; }));
    h.loop.run_once(40 * kMs);  // let an idle close arrive
  }
  CHECK(server.requests() == 5);
  CHECK(server.accepts() == 3);
}

TEST_CASE("http: 200 concurrent streams all complete") {
  TestServer server(canned_replies());
  ClientHarness h;
  constexpr int kStreams = 200;
  int ok = 0;
  int failed = 0;
  for (int i = 0; i < kStreams; ++i) {
    h.client.start(chat_request(server, "/fast"), [&](HttpResponse&& r) {
      if (r.error.kind == ErrorKind::kNone && r.reply_text == "ab" && r.has_usage) {
        ++ok;
      } else {
        ++failed;
      }
    });
  }
  CHECK(h.client.in_flight() == kStreams);
  REQUIRE(client_run_until(
      h.loop, [&] { return ok + failed == kStreams; }, 20000 * kMs));
  CHECK(ok == kStreams);
  CHECK(server.accepts() <= kStreams);
  CHECK(h.client.in_flight() == 0);
}

// Transfers are pooled (no allocation per request): whatever one request left in a Transfer must
// not reach the next request that reuses it.
TEST_CASE("http: a reused transfer starts clean after errors, a cancel and a large reply") {
  std::map<std::string, CannedReply> replies = canned_replies();
  CannedReply big;  // one 40 KiB event: the SSE buffers grow
  big.steps = {{0, kRoleChunk + chat_chunk(std::string(40u << 10, 'z')) + kDone}};
  replies["/big"] = big;
  TestServer server(replies);
  ClientHarness h;
  const HttpResponse first = h.run(chat_request(server, "/stream"));
  REQUIRE(first.error.kind == ErrorKind::kNone);
  CHECK(h.run(chat_request(server, "/openai-429")).error.kind == ErrorKind::kHttpStatus);
  CHECK(h.run(chat_request(server, "/malformed")).error.kind == ErrorKind::kMalformedEvent);
  CHECK(h.run(chat_request(server, "/nonstream")).reply_text == "Hi there");
  CHECK(h.run(chat_request(server, "/big")).reply_text.size() == (40u << 10));
  auto cancelled = chat_request(server, "/hold-mid");
  cancelled.cancel_after_ms = 20;
  CHECK(h.run(cancelled).error.kind == ErrorKind::kCancelled);
  for (int i = 0; i < 3; ++i) {
    const HttpResponse again = h.run(chat_request(server, "/stream"));
    CHECK(again.error.kind == ErrorKind::kNone);
    CHECK(again.http_status == 200);
    CHECK(again.reply_text == first.reply_text);
    CHECK(again.content_events == first.content_events);
    CHECK(again.chunk_gaps_ns.size() == first.chunk_gaps_ns.size());
    CHECK(again.has_usage);
    CHECK(again.cached_tokens == first.cached_tokens);
    CHECK(again.served_by.empty());
    CHECK(again.sent_ns <= again.first_token_ns);
  }
  SUBCASE("a smaller max_response_bytes than a kept buffer's capacity still bounds it") {
    HttpRequest small = chat_request(server, "/stream");
    small.max_response_bytes = 4096;
    const HttpResponse r = h.run(small);
    CHECK(r.error.kind == ErrorKind::kNone);
    CHECK(r.max_buffered_bytes <= 4096);
  }
}

TEST_CASE("http: the id of a finished request never cancels the next one in its place") {
  TestServer server(canned_replies());
  ClientHarness h;
  HttpResponse first;
  int calls = 0;
  const auto old_id = h.client.start(chat_request(server, "/fast"), [&](HttpResponse&& r) {
    first = std::move(r);
    ++calls;
  });
  REQUIRE(client_run_until(h.loop, [&] { return calls == 1; }));
  HttpResponse second;
  const auto new_id = h.client.start(chat_request(server, "/fast"), [&](HttpResponse&& r) {
    second = std::move(r);
    ++calls;
  });
  CHECK(new_id != old_id);
  h.client.cancel(old_id);  // finished: a no-op, whatever now runs in its slot
  REQUIRE(client_run_until(h.loop, [&] { return calls == 2; }));
  CHECK(first.error.kind == ErrorKind::kNone);
  CHECK(second.error.kind == ErrorKind::kNone);
  CHECK(second.reply_text == "ab");
}
