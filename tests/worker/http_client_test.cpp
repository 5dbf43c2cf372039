#include "worker/http_client.hpp"
#include "test_time.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// A tiny HTTP/1.1 server on 127.0.0.1 for these tests: one thread per connection, canned
// replies per path (chunked, with controllable pauses), keep-alive, and counters. Pauses wait on
// the connection socket, so a client that hangs up ends them at once.

namespace convoy::test {

struct ReplyStep {
  int delay_ms = 0;   // pause before these bytes
  std::string bytes;  // sent as one chunk (or raw when the reply is not chunked)
};

enum class ReplyEnd {
  kKeepAlive,  // end the body, wait for the next request on the connection
  kClose,      // end the body, close
  kAbort,      // close without ending the body
  kHold,       // send nothing more; wait until the client hangs up
  kIdleClose,  // end the body as for keep-alive, then close the idle connection 20 ms later
};

struct CannedReply {
  std::string status = "200 OK";
  std::string content_type = "text/event-stream";
  bool chunked = true;
  bool send_head = true;  // false: hold before the status line (with kHold)
  std::vector<ReplyStep> steps;
  ReplyEnd end = ReplyEnd::kKeepAlive;
  std::string extra_head;  // more header lines, each ending in CRLF
};

struct SeenRequest {
  std::string method;
  std::string path;
  std::string head;  // request line and headers
  std::string body;
};

class TestServer {
 public:
  explicit TestServer(std::map<std::string, CannedReply> replies) : replies_(std::move(replies)) {
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 1024) != 0) {
      throw std::runtime_error("test server: bind/listen failed");
    }
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~TestServer() {
    const uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(stop_fd_, &one, sizeof one);
    acceptor_.join();
    std::vector<std::thread> threads;
    {
      const std::lock_guard lock(mutex_);
      threads.swap(connections_);
    }
    for (auto& t : threads) t.join();
    ::close(listen_fd_);
    ::close(stop_fd_);
  }

  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  std::string url(const std::string& path, const std::string& host = "127.0.0.1") const {
    return "http://" + host + ":" + std::to_string(port_) + path;
  }
  int accepts() const { return accepts_.load(); }
  int requests() const { return requests_.load(); }
  SeenRequest last_request() const {
    const std::lock_guard lock(mutex_);
    return last_;
  }

 private:
  // Waits up to `ms` (or until the stop signal) for the peer; false when it hung up or we stop.
  bool pause(int fd, int ms) const {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, ms) <= 0) return true;
    if ((fds[1].revents & POLLIN) != 0) return false;
    char c = 0;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

  bool send_all(int fd, const std::string& bytes) const {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads one request into `req`; false on EOF or stop.
  bool read_request(int fd, std::string& buffer, SeenRequest& req) const {
    for (int i = 0; i < 10000; ++i) {
      const size_t head_end = buffer.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        req.head = buffer.substr(0, head_end);
        size_t length = 0;
        std::string lower = req.head;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const size_t cl = lower.find("content-length:");
        if (cl != std::string::npos) length = std::stoul(lower.substr(cl + 15));
        if (buffer.size() >= head_end + 4 + length) {
          req.body = buffer.substr(head_end + 4, length);
          buffer.erase(0, head_end + 4 + length);
          const size_t sp1 = req.head.find(' ');
          const size_t sp2 = req.head.find(' ', sp1 + 1);
          req.method = req.head.substr(0, sp1);
          req.path = req.head.substr(sp1 + 1, sp2 - sp1 - 1);
          return true;
        }
      }
      pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
      if (::poll(fds, 2, 10000) <= 0 || (fds[1].revents & POLLIN) != 0) return false;
      char chunk[16384];
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    return false;
  }

  static std::string chunk(const std::string& bytes) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
    return size + bytes + "\r\n";
  }

  // Serves one reply; false when the connection must close.
  bool serve(int fd, const CannedReply& reply) const {
    if (!reply.send_head) {
      while (pause(fd, 50)) {
      }
      return false;
    }
    std::string head =
        "HTTP/1.1 " + reply.status + "\r\nContent-Type: " + reply.content_type + "\r\n";
    if (reply.chunked) {
      head += "Transfer-Encoding: chunked\r\n";
    } else {
      size_t length = 0;
      for (const auto& s : reply.steps) length += s.bytes.size();
      head += "Content-Length: " + std::to_string(length) + "\r\n";
    }
    if (reply.end == ReplyEnd::kClose) head += "Connection: close\r\n";
    head += reply.extra_head;
    if (!send_all(fd, head + "\r\n")) return false;
    for (const auto& step : reply.steps) {
      if (step.delay_ms > 0 && !pause(fd, step.delay_ms)) return false;
      if (!send_all(fd, reply.chunked ? chunk(step.bytes) : step.bytes)) return false;
    }
    switch (reply.end) {
      case ReplyEnd::kKeepAlive:
        return !reply.chunked || send_all(fd, "0\r\n\r\n");
      case ReplyEnd::kIdleClose:
        if (reply.chunked) send_all(fd, "0\r\n\r\n");
        pause(fd, 20);
        return false;
      case ReplyEnd::kClose:
        if (reply.chunked) send_all(fd, "0\r\n\r\n");
        return false;
      case ReplyEnd::kAbort:
        return false;
      case ReplyEnd::kHold:
        while (pause(fd, 50)) {
        }
        return false;
    }
    return false;
  }

  void connection(int fd) {
    std::string buffer;
    SeenRequest req;
    while (read_request(fd, buffer, req)) {
      ++requests_;
      {
        const std::lock_guard lock(mutex_);
        last_ = req;
      }
      auto it = replies_.find(req.path);
      CannedReply not_found{"404 Not Found",       "text/plain",         false, true,
                            {{0, "no such path"}}, ReplyEnd::kKeepAlive, {}};
      if (!serve(fd, it == replies_.end() ? not_found : it->second)) break;
    }
    ::close(fd);
  }

  void accept_loop() {
    for (;;) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 || (fds[1].revents & POLLIN) != 0) return;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++accepts_;
      const std::lock_guard lock(mutex_);
      connections_.emplace_back([this, fd] { connection(fd); });
    }
  }

  const std::map<std::string, CannedReply> replies_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<int> accepts_{0};
  std::atomic<int> requests_{0};
  mutable std::mutex mutex_;
  SeenRequest last_;
  std::vector<std::thread> connections_;
  std::thread acceptor_;
};

}  // namespace convoy::test

using convoy::steady_now_ns;
using convoy::proto::ErrorKind;
using convoy::test::CannedReply;
using convoy::test::ReplyEnd;
using convoy::test::ReplyStep;
using convoy::test::TestServer;
using convoy::worker::EventLoop;
using convoy::worker::HttpClient;
using convoy::worker::HttpRequest;
using convoy::worker::HttpResponse;

namespace {

std::string chat_chunk(const std::string& content) {
  return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
         "\"delta\":{\"content\":\"" +
         content + "\"},\"finish_reason\":null}]}\n\n";
}

const std::string kRoleChunk =
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\"}}]}\n\n";
const std::string kFinishChunk =
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
const std::string kUsageChunk =
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5,"
    "\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\n";
const std::string kDone = "data: [DONE]\n\n";

constexpr int kGapMs = 10;

CannedReply streaming_reply() {
  CannedReply r;
  r.steps = {{0, kRoleChunk},
             {0, chat_chunk("Hello")},
             {kGapMs, chat_chunk(",")},
             {kGapMs, chat_chunk(" world")},
             {kGapMs, chat_chunk("!")},
             {kGapMs, chat_chunk(" Bye")},
             {0, kFinishChunk},
             {0, kUsageChunk},
             {0, kDone}};
  return r;
}

CannedReply fast_reply() {
  CannedReply r;
  r.steps = {{0, kRoleChunk + chat_chunk("a") + chat_chunk("b")}, {0, kUsageChunk + kDone}};
  return r;
}

CannedReply json_reply(const std::string& status, const std::string& body) {
  CannedReply r;
  r.status = status;
  r.content_type = "application/json";
  r.chunked = false;
  r.steps = {{0, body}};
  return r;
}

std::map<std::string, CannedReply> canned_replies() {
  std::map<std::string, CannedReply> m;
  m["/stream"] = streaming_reply();
  m["/fast"] = fast_reply();
  m["/completions"].steps = {
      {0, "data: {\"choices\":[{\"index\":0,\"text\":\"once\"}]}\n\n"},
      {0, "data: {\"choices\":[{\"index\":0,\"text\":\" upon\"}]}\n\n" + kDone}};
  m["/reasoning"].steps = {
      {0, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n"},
      {0, chat_chunk("ok") + kDone}};
  m["/nonstream"] = json_reply(
      "200 OK",
      "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hi there\"}}],"
      "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}");
  m["/embeddings"] = json_reply(
      "200 OK",
      "{\"data\":[{\"embedding\":[0.1]},{\"embedding\":[0.2]}],\"usage\":{\"prompt_tokens\":4}}");
  m["/openai-429"] =
      json_reply("429 Too Many Requests",
                 "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"rate_limit_error\","
                 "\"code\":\"rate_limit_exceeded\"}}");
  m["/dynamo-503"] = json_reply(
      "503 Service Unavailable",
      "{\"message\":\"no instances of worker\",\"type\":\"Service Unavailable\",\"code\":503}");
  CannedReply text = json_reply("500 Internal Server Error", "  " + std::string(2000, 'x') + "\n");
  text.content_type = "text/plain";
  m["/text-500"] = text;
  m["/hold-before"].send_head = false;
  m["/hold-before"].end = ReplyEnd::kHold;
  m["/hold-mid"].steps = {{0, kRoleChunk + chat_chunk("first")}};
  m["/hold-mid"].end = ReplyEnd::kHold;
  m["/no-done"].steps = {{0, chat_chunk("a")}, {0, chat_chunk("b")}};
  m["/abort"].steps = {{0, chat_chunk("a")}};
  m["/abort"].end = ReplyEnd::kAbort;
  m["/malformed"].steps = {
      {0, chat_chunk("a")}, {0, "data: {\"choices\": [\n\n"}, {0, chat_chunk("after")}};
  m["/error-data"].steps = {{0, chat_chunk("a")},
                            {0,
                             "data: {\"error\":{\"message\":\"engine "
                             "died\",\"type\":\"internal_error\",\"code\":500}}\n\n"}};
  m["/error-event"].steps = {
      {0, chat_chunk("a")},
      {0, "event: error\ndata: {\"message\":\"overloaded\",\"type\":\"busy\"}\n\n"}};
  // session_routing.verify: Dynamo's nvext.worker_id on every content chunk (not the usage
  // chunk), and at the top of a whole body.
  const std::string worker_chunk =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"v\"}}],\"nvext\":{"
      "\"worker_id\":{\"prefill_worker_id\":1003,\"prefill_dp_rank\":1,"
      "\"decode_worker_id\":1003,\"decode_dp_rank\":1}}}\n\n";
  m["/verify-stream"].steps = {
      {0, kRoleChunk}, {0, worker_chunk}, {0, worker_chunk}, {0, kUsageChunk + kDone}};
  m["/verify-body"] = json_reply(
      "200 OK",
      "{\"choices\":[{\"index\":0,\"message\":{\"content\":\"x\"}}],\"nvext\":{"
      "\"worker_id\":{\"decode_worker_id\":18446744073709551615,\"decode_dp_rank\":0}}}");
  m["/ignores-stream"] = m["/nonstream"];
  // A reasoning model (SGLang's reasoning_content, vLLM's reasoning), then the answer.
  m["/think-then-answer"].steps = {
      {0, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"a\"}}]}\n\n"},
      {kGapMs, "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"b\"}}]}\n\n"},
      {kGapMs, chat_chunk("c")},
      {0,
       "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3,"
       "\"completion_tokens_details\":{\"reasoning_tokens\":2}}}\n\n" +
           kDone}};
  m["/fast-idle-close"] = m["/fast"];
  m["/fast-idle-close"].end = ReplyEnd::kIdleClose;
  return m;
}

HttpRequest chat_request(const TestServer& server, const std::string& path) {
  HttpRequest req;
  req.url = server.url(path);
  req.headers = {"X-Request-ID: r-1", "Authorization: Bearer k"};
  req.body = "{\"model\":\"m\",\"stream\":true}";
  req.request_timeout_s = 5;
  return req;
}

template <class Pred>
bool client_run_until(EventLoop& loop, Pred done, int64_t budget_ns = 5000 * kMs) {
  const int64_t deadline = steady_now_ns() + budget_ns;
  for (int i = 0; i < 1000000 && !done() && steady_now_ns() < deadline; ++i) {
    loop.run_once(20 * kMs);
  }
  return done();
}

// One request through a fresh loop and client.
struct ClientHarness {
  EventLoop loop;
  HttpClient client{loop};

  HttpResponse run(HttpRequest req) {
    HttpResponse out;
    int calls = 0;
    client.start(std::move(req), [&](HttpResponse&& r) {
      out = std::move(r);
      ++calls;
    });
    REQUIRE(client_run_until(loop, [&] { return calls > 0; }));
    loop.run_once(0);
    CHECK(calls == 1);
    CHECK(client.in_flight() == 0);
    return out;
  }
};

}  // namespace

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
  CHECK(r.first_token_ns < r.second_token_ns);
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

// --- bounded replies (target.max_response_bytes) -------------------------------------------

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
