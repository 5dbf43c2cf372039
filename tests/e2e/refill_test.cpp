// Concurrency refill end to end: workers start window conversations in the slots
// their own ends free, and the server never sees more requests at once than load.concurrency.
// The server here counts them: a request is in flight from its last byte read to its reply
// written, which a client cannot have more of than it has open requests.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Keep-alive HTTP/1.1 on 127.0.0.1, every request answered with one SSE chunk `hold_ms` after
// it arrived (so that requests overlap), counting the most in flight at once.
class CountingServer {
 public:
  explicit CountingServer(int hold_ms) : hold_ns_(int64_t{hold_ms} * 1'000'000) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 256) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    REQUIRE(::pipe2(wake_, O_CLOEXEC) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~CountingServer() {
    (void)!::write(wake_[1], "x", 1);
    thread_.join();
    for (auto& [fd, c] : conns_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }
  CountingServer(const CountingServer&) = delete;
  CountingServer& operator=(const CountingServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int max_in_flight() const { return max_in_flight_.load(); }
  int requests() const { return requests_.load(); }

 private:
  struct Conn {
    std::string in;
    int64_t reply_at_ns = 0;  // 0: no request waiting for its reply
    bool listing = false;     // that request is convoy's check before traffic (a GET): not counted
  };

  static std::string reply() {
    const std::string body =
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"
        "[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"
        "data: [DONE]\n\n";
    return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  // A whole request at the front of `in` (headers and Content-Length body): consumed.
  static bool take_request(std::string& in, bool& get) {
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) return false;
    std::string head = in.substr(0, end);
    std::transform(head.begin(), head.end(), head.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    size_t length = 0;
    if (size_t at = head.find("\r\ncontent-length:"); at != std::string::npos) {
      length = std::strtoul(head.c_str() + at + 17, nullptr, 10);
    }
    if (in.size() < end + 4 + length) return false;
    get = head.rfind("get ", 0) == 0;
    in.erase(0, end + 4 + length);
    return true;
  }

  void on_readable(int fd, Conn& c) {
    char buf[16384];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      if (c.reply_at_ns != 0) --in_flight_;
      ::close(fd);
      conns_.erase(fd);
      return;
    }
    c.in.append(buf, static_cast<size_t>(n));
    if (c.reply_at_ns == 0 && take_request(c.in, c.listing)) {
      c.reply_at_ns = now_ns() + hold_ns_;
      max_in_flight_ = std::max(max_in_flight_.load(), ++in_flight_);
    }
  }

  void reply_due(int64_t now) {
    for (auto& [fd, c] : conns_) {
      if (c.reply_at_ns == 0 || c.reply_at_ns > now) continue;
      c.reply_at_ns = 0;
      --in_flight_;  // before the client can read it and send its next request
      if (!c.listing) ++requests_;
      const std::string r = reply();
      (void)!::send(fd, r.data(), r.size(), MSG_NOSIGNAL);
      if (take_request(c.in, c.listing)) {  // pipelined (curl does not, but be exact)
        c.reply_at_ns = now + hold_ns_;
        max_in_flight_ = std::max(max_in_flight_.load(), ++in_flight_);
      }
    }
  }

  void serve() {
    for (;;) {
      std::vector<pollfd> fds = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      int64_t next = -1;
      for (auto& [fd, c] : conns_) {
        fds.push_back({fd, POLLIN, 0});
        if (c.reply_at_ns != 0 && (next < 0 || c.reply_at_ns < next)) next = c.reply_at_ns;
      }
      const int timeout_ms =
          next < 0 ? 1000 : static_cast<int>(std::max<int64_t>(0, (next - now_ns()) / 1'000'000));
      ::poll(fds.data(), fds.size(), timeout_ms);
      if (fds[1].revents != 0) return;
      if (fds[0].revents & POLLIN) {
        for (int fd; (fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
          conns_[fd] = Conn{};
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        auto it = conns_.find(fds[i].fd);
        if (it != conns_.end() && fds[i].revents != 0) on_readable(fds[i].fd, it->second);
      }
      reply_due(now_ns());
    }
  }

  int64_t hold_ns_;
  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::map<int, Conn> conns_;  // the server thread's only
  int in_flight_ = 0;
  std::atomic<int> max_in_flight_{0};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

struct Ran {
  int measured = 0;
  int warmup = 0;
  std::set<std::string> conversations;  // correlation ids with a measured record
  int64_t last_warmup_sent_ns = 0;
  int64_t first_measure_sent_ns = INT64_MAX;
};

// `stop`: the run's stop condition and any other settings, as --set arguments' values.
Ran run_against(const CountingServer& server, const fs::path& out, int concurrency, int workers,
                const std::vector<std::string>& sets) {
  std::vector<std::string> argv = {bin("controller/convoy"),
                                   "run",
                                   src("configs/quickstart.yaml"),
                                   "-o",
                                   out.string(),
                                   "--quiet",
                                   "--set",
                                   "target.url=" + server.url(),
                                   "--set",
                                   "target.api_key_env=null",
                                   "--set",
                                   "target.use_server_token_counts=false",
                                   "--set",
                                   "session_routing.mode=off",
                                   "--set",
                                   "load.concurrency=" + std::to_string(concurrency),
                                   "--set",
                                   "workers.local=" + std::to_string(workers),
                                   "--set",
                                   "output.html=false"};
  for (const std::string& set : sets) argv.insert(argv.end(), {"--set", set});
  Subprocess run(argv);
  const auto rc = run.wait(120);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  Ran ran;
  for (const auto& r : read_jsonl(out / "records.jsonl")) {
    const int64_t sent = r["sent_ns"].GetInt64();
    if (std::string(r["phase"].GetString()) != "measure") {
      ++ran.warmup;
      ran.last_warmup_sent_ns = std::max(ran.last_warmup_sent_ns, sent);
      continue;
    }
    ++ran.measured;
    ran.first_measure_sent_ns = std::min(ran.first_measure_sent_ns, sent);
    ran.conversations.insert(r["x_correlation_id"].GetString());
  }
  return ran;
}

}  // namespace

TEST_CASE("concurrency refill: the server never sees more requests at once than load.concurrency") {
  TempDir dir("convoy-refill-");
  CountingServer server(/*hold_ms=*/2);
  SUBCASE("one worker, one slot") {
    const Ran ran = run_against(server, dir.path() / "one", 1, 1, {"load.sessions=30"});
    CHECK(server.max_in_flight() == 1);
    CHECK(ran.conversations.size() == 30);  // load.sessions exact
    CHECK(ran.measured == server.requests());
  }
  SUBCASE("two workers, four slots") {
    const Ran ran = run_against(server, dir.path() / "two", 4, 2, {"load.sessions=80"});
    CHECK(server.max_in_flight() <= 4);
    CHECK(server.max_in_flight() >= 2);
    CHECK(ran.conversations.size() == 80);
    CHECK(ran.measured == server.requests());
  }
}

TEST_CASE("concurrency refill under load.requests: within load.concurrency, exact request count") {
  // Multi-turn conversations (the quickstart's 1 to 6 turns): the last one is cut to fit.
  TempDir dir("convoy-refill-requests-");
  CountingServer server(/*hold_ms=*/2);
  SUBCASE("one worker, one slot") {
    const Ran ran = run_against(server, dir.path() / "one", 1, 1, {"load.requests=40"});
    CHECK(server.max_in_flight() == 1);
    CHECK(server.requests() == 40);
    CHECK(ran.measured == 40);
  }
  SUBCASE("two workers, four slots") {
    const Ran ran = run_against(server, dir.path() / "two", 4, 2, {"load.requests=150"});
    CHECK(server.max_in_flight() <= 4);
    CHECK(server.max_in_flight() >= 2);
    CHECK(server.requests() == 150);
    CHECK(ran.measured == 150);
  }
}

TEST_CASE("concurrency refill in warmup: within load.concurrency, over before the measure") {
  TempDir dir("convoy-refill-warmup-");
  CountingServer server(/*hold_ms=*/2);
  const Ran ran = run_against(server, dir.path() / "warm", 4, 2,
                              {"load.warmup_sessions=30", "load.sessions=30"});
  CHECK(server.max_in_flight() <= 4);
  CHECK(ran.conversations.size() == 30);
  CHECK(ran.warmup > 0);
  CHECK(ran.measured + ran.warmup == server.requests());
  // No warmup conversation starts in the measure: it begins once every one of them ended.
  CHECK(ran.last_warmup_sent_ns < ran.first_measure_sent_ns);
}
