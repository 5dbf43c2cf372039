// Shared by the HTTP client tests (http_client_test.cpp, http_client_limits_test.cpp): the test
// server, the canned replies it serves, and a harness that runs one request through a fresh loop
// and client.
#pragma once

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.hpp"
#include "test_time.hpp"
#include "worker/event_loop.hpp"
#include "worker/http_client.hpp"

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

inline std::string chat_chunk(const std::string& content) {
  return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
         "\"delta\":{\"content\":\"" +
         content + "\"},\"finish_reason\":null}]}\n\n";
}

inline const std::string kRoleChunk =
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\"}}]}\n\n";
inline const std::string kFinishChunk =
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
inline const std::string kUsageChunk =
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5,"
    "\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\n";
inline const std::string kDone = "data: [DONE]\n\n";

inline constexpr int kGapMs = 10;

inline CannedReply streaming_reply() {
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

inline CannedReply fast_reply() {
  CannedReply r;
  r.steps = {{0, kRoleChunk + chat_chunk("a") + chat_chunk("b")}, {0, kUsageChunk + kDone}};
  return r;
}

inline CannedReply json_reply(const std::string& status, const std::string& body) {
  CannedReply r;
  r.status = status;
  r.content_type = "application/json";
  r.chunked = false;
  r.steps = {{0, body}};
  return r;
}

inline std::map<std::string, CannedReply> canned_replies() {
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

inline worker::HttpRequest chat_request(const TestServer& server, const std::string& path) {
  worker::HttpRequest req;
  req.url = server.url(path);
  req.headers = {"X-Request-ID: r-1", "Authorization: Bearer k"};
  req.body = "{\"model\":\"m\",\"stream\":true}";
  req.request_timeout_s = 5;
  return req;
}

template <class Pred>
bool client_run_until(worker::EventLoop& loop, Pred done, int64_t budget_ns = 5000 * kMs) {
  const int64_t deadline = steady_now_ns() + budget_ns;
  for (int i = 0; i < 1000000 && !done() && steady_now_ns() < deadline; ++i) {
    loop.run_once(20 * kMs);
  }
  return done();
}

// One request through a fresh loop and client.
struct ClientHarness {
  worker::EventLoop loop;
  worker::HttpClient client{loop};

  worker::HttpResponse run(worker::HttpRequest req) {
    worker::HttpResponse out;
    int calls = 0;
    client.start(std::move(req), [&](worker::HttpResponse&& r) {
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

}  // namespace convoy::test
