// Independently of the configuration's ranges: no input can make a run ignore Ctrl-C or skip
// writing its files. A telemetry endpoint that accepts and then dribbles its reply forever kept
// the scrape thread busy for telemetry.timeout_s (at the start's first scrape and at the final
// one), and a run in a long stage must end as promptly as any other.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "e2e/quickstart_run.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

using namespace convoy::test;
namespace fs = std::filesystem;

namespace {

// A loopback "Prometheus endpoint" that accepts and then sends one comment line every 50 ms,
// never ending its reply. With `answer_first`, the first connection gets a whole reply at once
// (so a run gets past its first scrape) and every later one dribbles.
class DribbleServer {
 public:
  explicit DribbleServer(bool answer_first) : answer_first_(answer_first) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 16) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~DribbleServer() {
    stop_ = true;
    thread_.join();
    for (int fd : clients_) ::close(fd);
    ::close(listen_fd_);
  }
  DribbleServer(const DribbleServer&) = delete;
  DribbleServer& operator=(const DribbleServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }
  // Waits until a connection is held open and dribbling (an event from the serving thread).
  bool wait_dribbling(double timeout_s) {
    std::unique_lock lock(mutex_);
    return dribbling_cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                  [this] { return dribbling_ > 0; });
  }

 private:
  static void send_text(int fd, const std::string& s) {
    (void)!::send(fd, s.data(), s.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  void serve() {
    constexpr int kTickMs = 50;
    bool first = true;
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, kTickMs) > 0) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0 && first && answer_first_) {
          const std::string body = "up 1\n";
          send_text(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
          ::shutdown(fd, SHUT_WR);
          clients_.push_back(fd);
        } else if (fd >= 0) {
          send_text(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n");
          dribble_.push_back(fd);
          clients_.push_back(fd);
          {
            const std::lock_guard lock(mutex_);
            ++dribbling_;
          }
          dribbling_cv_.notify_all();
        }
        first = first && fd < 0;
      }
      for (int fd : dribble_) send_text(fd, "# still coming\n");
    }
  }

  bool answer_first_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable dribbling_cv_;
  int dribbling_ = 0;         // connections held open so far (guarded by mutex_)
  std::vector<int> clients_;  // closed at the end (the serving thread's, until then)
  std::vector<int> dribble_;
  std::thread thread_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::string> slow_telemetry(const DribbleServer& server) {
  return {"dataset.conversations=400",
          "mock.itl_ms=20",
          "load.grace_s=2",
          "workers.local=1",
          "telemetry.timeout_s=600",
          "telemetry.interval_s=0.2",
          "telemetry.endpoints=[{name: slow, url: \"" + server.url() + "\"}]"};
}

}  // namespace

TEST_CASE("Ctrl-C ends a run whose scrape thread is busy with a dribbling endpoint") {
  SUBCASE("mid-run: exit 130 at once, summary.json and server_metrics.jsonl written") {
    DribbleServer server(true);
    const fs::path out = fresh_path("e2e-sigint-scrape");
    Subprocess run(logged_quickstart_run_argv(out, slow_telemetry(server)));
    // A scrape after the first is in flight and dribbling; conversations are too.
    REQUIRE(server.wait_dribbling(60));
    REQUIRE(run.wait_for_output("measuring", 60));
    const auto t0 = std::chrono::steady_clock::now();
    run.signal(SIGINT);
    const auto rc = run.wait(60);
    INFO(run.output());
    REQUIRE(rc.has_value());
    CHECK(*rc == 130);
    CHECK(seconds_since(t0) < 15);  // grace_s 2 and the workers' stop; was telemetry.timeout_s
    const auto summary = read_json(out / "summary.json");
    REQUIRE_FALSE(summary.HasParseError());
    CHECK(summary["run"]["interrupted"].GetBool());
    CHECK(fs::exists(out / "server_metrics.jsonl"));
    fs::remove_all(out);
  }
  SUBCASE("during the first scrape at the start: exit 130 at once") {
    DribbleServer server(false);
    const fs::path out = fresh_path("e2e-sigint-first-scrape");
    Subprocess run(quickstart_run_argv(out, slow_telemetry(server)));
    REQUIRE(server.wait_dribbling(60));
    const auto t0 = std::chrono::steady_clock::now();
    run.signal(SIGINT);
    const auto rc = run.wait(60);
    INFO(run.output());
    REQUIRE(rc.has_value());
    CHECK(*rc == 130);
    CHECK(seconds_since(t0) < 15);  // was telemetry.timeout_s + 1 s
    fs::remove_all(out);
  }
}

TEST_CASE("Ctrl-C ends a run in a long stage promptly, with its files") {
  const fs::path out = fresh_path("e2e-sigint-long-stage");
  Subprocess run(logged_quickstart_run_argv(
      out, {"dataset.conversations=400", "mock.itl_ms=20", "load.grace_s=2", "workers.local=1",
            "load.stages=[{name: long, concurrency: 4, duration_s: 3600}]"}));
  // The long stage has begun (the controller says so as it starts measuring).
  REQUIRE(run.wait_for_output("measuring", 60));
  const auto t0 = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  const auto rc = run.wait(60);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 130);
  CHECK(seconds_since(t0) < 15);
  const auto summary = read_json(out / "summary.json");
  REQUIRE_FALSE(summary.HasParseError());
  CHECK(summary["run"]["interrupted"].GetBool());
  REQUIRE(summary.HasMember("stages"));
  CHECK(summary["stages"].Size() == 1);
  CHECK(fs::exists(out / "report.html"));
  fs::remove_all(out);
}
