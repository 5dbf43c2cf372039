// 250 slowloris connections (connected, then idle or dribbling one header line)
// no longer starve the live /metrics port: a real scrape behind them is answered in seconds
// (controller/live/live_metrics.cpp bounds each client's request time and the threads).
#include <arpa/inet.h>
#include <curl/curl.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "controller/live/live_metrics.hpp"

namespace {

size_t append_scrape_body(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// A loopback connection to `port` that sends `partial` and then nothing.
int idle_connection(int port, const std::string& partial) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  if (!partial.empty()) (void)!::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL);
  return fd;
}

}  // namespace

TEST_CASE("live metrics: 250 slowloris connections do not starve a real scrape") {
  convoy::live::LiveMetrics live("127.0.0.1:0", "slowloris-run");
  const int port = live.port();
  REQUIRE(port > 0);
  std::vector<int> idle;
  for (int i = 0; i < 250; ++i) {
    // Half say nothing, half start a request and never finish its headers.
    idle.push_back(idle_connection(port, i % 2 ? "GET /metrics HTTP/1.1\r\nHost: x\r\n" : ""));
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::string body;
  long status = 0;
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  const std::string url = live.url();
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_scrape_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 20000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int fd : idle) ::close(fd);
  INFO("curl: " << curl_easy_strerror(rc) << ", " << took_s << " s");
  CHECK(rc == CURLE_OK);
  CHECK(status == 200);
  CHECK(body.find("slowloris-run") != std::string::npos);
  CHECK(took_s < 8);  // about 2 s (250 / 64 threads x 0.5 s); an hour with civetweb's defaults
}
