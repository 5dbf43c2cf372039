// The controller's cost of server telemetry: the Telemetry class scraping N real HTTP
// endpoints on loopback, each serving S series, every interval_s, for a while. The endpoints
// are served by a child process (a small poll(2) HTTP/1.1 server with keep-alive, each reply
// freshly generated so counters grow and gauges move), so this process's CPU is the
// controller's side alone: the scraper thread ("convoy-scrape": libcurl, the parser, the series
// store, server_metrics.jsonl) is measured from /proc/self/task/TID/schedstat, and the summary
// (summary.json's server_metrics) is timed once at the end.
//
// Usage: telemetry_bench [--endpoints N] [--series S] [--seconds T] [--interval S] [--out DIR]
//        telemetry_bench --serve-only [--endpoints N] [--series S]
//   --serve-only prints one URL per line, then serves until killed (scripts/bench uses it to
//   run `convoy run` with and without telemetry against the same endpoints).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "controller/report/server_metrics_json.hpp"
#include "controller/telemetry/telemetry.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace tel = convoy::telemetry;

struct Options {
  int endpoints = 10;
  int series = 5000;
  double seconds = 20;
  double interval_s = 1;
  std::string out = "/tmp/convoy-telemetry-bench";
  bool serve_only = false;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--serve-only") {
      o.serve_only = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "telemetry_bench: %s needs a value\n", flag.c_str());
      std::exit(2);
    }
    const char* value = argv[++i];
    if (flag == "--endpoints") {
      o.endpoints = std::atoi(value);
    } else if (flag == "--series") {
      o.series = std::atoi(value);
    } else if (flag == "--seconds") {
      o.seconds = std::atof(value);
    } else if (flag == "--interval") {
      o.interval_s = std::atof(value);
    } else if (flag == "--out") {
      o.out = value;
    } else {
      std::fprintf(stderr, "telemetry_bench: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

// One endpoint's exposition at its `n`-th scrape: exactly `series` samples, a mix like a real
// inference server's: a few vLLM headline families, then gauges, counters and histograms
// (10 buckets + _sum + _count) over label sets of 100 (gpu, route, model_name).
std::string exposition(int endpoint, int64_t n, int series) {
  std::string out;
  out.reserve(static_cast<size_t>(series) * 90);
  char line[256];
  int left = series;
  auto add = [&](const char* text) {
    out += text;
    --left;
  };
  out += "# TYPE vllm:num_requests_running gauge\n";
  std::snprintf(line, sizeof line,
                "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} %lld\n",
                static_cast<long long>(n % 64));
  add(line);
  out += "# TYPE vllm:generation_tokens_total counter\n";
  std::snprintf(line, sizeof line,
                "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} %lld\n",
                static_cast<long long>(n * 4096));
  add(line);
  for (int family = 0; left > 0; ++family) {
    const int kind = family % 4;  // gauge, counter, counter, histogram
    if (kind == 3) {
      std::snprintf(line, sizeof line, "# TYPE bench_latency_%d_seconds histogram\n", family);
      out += line;
      for (int set = 0; set < 10 && left >= 12; ++set) {
        const char* les[] = {"0.005", "0.01", "0.025", "0.05", "0.1",
                             "0.25",  "0.5",  "1",     "2.5",  "+Inf"};
        for (int b = 0; b < 10; ++b) {
          std::snprintf(
              line, sizeof line,
              "bench_latency_%d_seconds_bucket{le=\"%s\",model_name=\"m\",route=\"/r%d\"} "
              "%lld\n",
              family, les[b], set, static_cast<long long>(n * (b + 1) * 3));
          add(line);
        }
        std::snprintf(line, sizeof line,
                      "bench_latency_%d_seconds_sum{model_name=\"m\",route=\"/r%d\"} %.3f\n"
                      "bench_latency_%d_seconds_count{model_name=\"m\",route=\"/r%d\"} %lld\n",
                      family, set, static_cast<double>(n) * 7.5, family, set,
                      static_cast<long long>(n * 30));
        out += line;
        left -= 2;
      }
      continue;
    }
    const bool counter = kind != 0;
    std::snprintf(line, sizeof line, "# HELP bench_%s_%d Synthetic series of the benchmark.\n",
                  counter ? "requests" : "gpu_value", family);
    out += line;
    std::snprintf(line, sizeof line, "# TYPE bench_%s_%d%s %s\n",
                  counter ? "requests" : "gpu_value", family, counter ? "_total" : "",
                  counter ? "counter" : "gauge");
    out += line;
    for (int set = 0; set < 100 && left > 0; ++set) {
      if (counter) {
        std::snprintf(line, sizeof line,
                      "bench_requests_%d_total{code=\"200\",instance=\"node%d\",route=\"/r%d\"} "
                      "%lld\n",
                      family, endpoint, set, static_cast<long long>(n * (set + 1)));
      } else {
        std::snprintf(line, sizeof line,
                      "bench_gpu_value_%d{gpu=\"%d\",instance=\"node%d\"} %.2f\n", family, set,
                      endpoint, static_cast<double>((n * 37 + set) % 1000) / 10.0);
      }
      add(line);
    }
  }
  return out;
}

struct Listener {
  int fd = -1;
  int port = 0;
  int64_t served = 0;
};

Listener listen_loopback() {
  Listener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (l.fd < 0 || ::bind(l.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(l.fd, 64) != 0) {
    std::perror("telemetry_bench: listen");
    std::exit(1);
  }
  socklen_t len = sizeof addr;
  ::getsockname(l.fd, reinterpret_cast<sockaddr*>(&addr), &len);
  l.port = ntohs(addr.sin_port);
  return l;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The server process: every listener and connection in one poll(2) loop, until `quit_fd` reads
// end of file. A request is answered once its header ends (GET, no body).
[[noreturn]] void serve(std::vector<Listener> listeners, int quit_fd, int series) {
  struct Conn {
    int fd;
    int endpoint;
    std::string in;
  };
  std::vector<Conn> conns;
  while (true) {
    std::vector<pollfd> fds{{quit_fd, POLLIN, 0}};
    for (const Listener& l : listeners) fds.push_back({l.fd, POLLIN, 0});
    for (const Conn& c : conns) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    if (fds[0].revents) std::_Exit(0);
    const size_t first_conn = 1 + listeners.size();
    std::vector<Conn> kept;
    for (size_t i = 0; i < fds.size() - first_conn; ++i) {
      Conn& c = conns[i];
      bool open = true;
      if (fds[first_conn + i].revents) {
        char buf[4096];
        const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        open = n > 0;
        if (open) c.in.append(buf, static_cast<size_t>(n));
        if (open && c.in.find("\r\n\r\n") != std::string::npos) {
          c.in.clear();
          Listener& l = listeners[static_cast<size_t>(c.endpoint)];
          const std::string body = exposition(c.endpoint, ++l.served, series);
          open = write_all(c.fd,
                           "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                           "Content-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body);
        }
      }
      if (open) {
        kept.push_back(std::move(c));
      } else {
        ::close(c.fd);
      }
    }
    for (size_t i = 0; i < listeners.size(); ++i) {
      if (!(fds[1 + i].revents & POLLIN)) continue;
      const int fd = ::accept4(listeners[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) kept.push_back({fd, static_cast<int>(i), {}});
    }
    conns = std::move(kept);
  }
}

// Forks the server; returns its pid and the URLs. Its stdin-like quit pipe is `*quit_write`.
pid_t start_server(const Options& o, std::vector<std::string>& urls, int* quit_write) {
  std::vector<Listener> listeners;
  for (int i = 0; i < o.endpoints; ++i) {
    listeners.push_back(listen_loopback());
    urls.push_back("http://127.0.0.1:" + std::to_string(listeners.back().port) + "/metrics");
  }
  int quit[2];
  if (::pipe2(quit, O_CLOEXEC) != 0) std::exit(1);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(quit[1]);
    serve(std::move(listeners), quit[0], o.series);
  }
  ::close(quit[0]);
  for (const Listener& l : listeners) ::close(l.fd);
  *quit_write = quit[1];
  return pid;
}

// The CPU time of this process's thread named `name`, in seconds (0 when there is none).
double thread_cpu_s(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string n;
    std::getline(comm, n);
    if (n != name) continue;
    std::ifstream schedstat(task.path() / "schedstat");
    double run_ns = 0;
    if (schedstat >> run_ns) return run_ns / 1e9;
  }
  return 0;
}

double process_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

struct Figures {
  double cpu_s = 0;      // the scraper thread's
  double process_s = 0;  // the whole process's (the main thread only sleeps)
  double wall_s = 0;
  double summary_ms = 0;
  size_t summary_bytes = 0;
  int64_t scrapes = 0;
  int64_t errors = 0;
  int64_t samples = 0;
};

Figures measure(const Options& o, const std::vector<std::string>& urls) {
  convoy::TelemetryConfig config;
  config.interval_s = o.interval_s;
  config.timeout_s = 2;
  config.max_series = static_cast<int64_t>(o.endpoints) * o.series + 1000;  // keep them all
  std::vector<convoy::TelemetryEndpoint> endpoints;
  for (size_t i = 0; i < urls.size(); ++i) {
    convoy::TelemetryEndpoint e;
    e.name = "node" + std::to_string(i);
    e.url = urls[i];
    endpoints.push_back(e);
  }
  Figures f;
  tel::Telemetry telemetry(config, endpoints, now_ns, o.out + "/server_metrics.jsonl");
  for (const auto& failure : telemetry.wait_first_round()) {
    std::fprintf(stderr, "%s\n", failure.what.c_str());
  }
  telemetry.start_window(now_ns());
  // The first round created every series; from here on each scrape is the steady state.
  const double cpu0 = thread_cpu_s("convoy-scrape");
  const double process0 = process_cpu_s();
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  f.cpu_s = thread_cpu_s("convoy-scrape") - cpu0;
  f.process_s = process_cpu_s() - process0;
  f.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  telemetry.stop();
  const auto s0 = Clock::now();
  const std::string summary = convoy::controller::server_metrics_json(telemetry.server_metrics());
  f.summary_ms = std::chrono::duration<double, std::milli>(Clock::now() - s0).count();
  f.summary_bytes = summary.size();
  for (const auto& e : telemetry.endpoint_stats()) {
    f.scrapes += e.scrapes;
    f.errors += e.errors;
    f.samples += e.samples;
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  std::vector<std::string> urls;
  int quit = -1;
  const pid_t server = start_server(o, urls, &quit);
  if (o.serve_only) {
    for (const auto& u : urls) std::printf("%s\n", u.c_str());
    std::fflush(stdout);
    while (true) ::pause();  // until killed; the server ends when this process's pipe closes
  }
  std::filesystem::create_directories(o.out);
  const Figures f = measure(o, urls);
  ::close(quit);
  ::waitpid(server, nullptr, 0);
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto jsonl_bytes = std::filesystem::file_size(o.out + "/server_metrics.jsonl");
  std::printf(
      "RESULT telemetry endpoints=%d series_per_endpoint=%d interval_s=%.3f seconds=%.1f "
      "scraper_cpu_pct=%.2f process_cpu_pct=%.2f scrapes=%lld errors=%lld samples=%lld "
      "max_rss_mib=%.1f summary_ms=%.1f summary_bytes=%zu jsonl_mib=%.1f\n",
      o.endpoints, o.series, o.interval_s, f.wall_s, 100 * f.cpu_s / f.wall_s,
      100 * f.process_s / f.wall_s, static_cast<long long>(f.scrapes),
      static_cast<long long>(f.errors), static_cast<long long>(f.samples),
      static_cast<double>(u.ru_maxrss) / 1024, f.summary_ms, f.summary_bytes,
      static_cast<double>(jsonl_bytes) / (1 << 20));
  return f.errors == 0 ? 0 : 1;
}
