#include "controller/live/live_metrics.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "common/build_info.hpp"
#include "common/log.hpp"
#include "controller/report/metrics.hpp"
#include "proto/envelope.hpp"

namespace convoy::live {

namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

// One outcome per ErrorKind: "ok" for kNone, else the kind's name (records.jsonl's error.kind).
constexpr size_t kOutcomes = static_cast<size_t>(proto::ErrorKind::kResponseTooLarge) + 1;

// Buckets fit for LLM latencies, in seconds. TTFT: vLLM's own (vllm-project/vllm,
// vllm/v1/metrics/loggers.py, vllm:time_to_first_token_seconds), so the two line up in one
// dashboard. ITL: vLLM's vllm:time_per_output_token_seconds buckets below 80 s, with 1, 2.5 and
// 5 ms added: fast servers (and the mock) stream faster than vLLM's 10 ms first bucket.
// Request latency: vLLM's request_latency_buckets (vllm:e2e_request_latency_seconds) with 50,
// 100 and 200 ms added for short replies. Schedule lag is convoy's own delay: 100 us to 10 s.
const Histogram::BucketBoundaries kTtftBuckets = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
const Histogram::BucketBoundaries kItlBuckets = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.15, 0.2,  0.3,
    0.4,   0.5,    0.75,  1.0,  2.5,   5.0,  7.5,   10.0, 20.0, 40.0, 80.0};
const Histogram::BucketBoundaries kLatencyBuckets = {
    0.05, 0.1,  0.2,  0.3,  0.5,  0.8,  1.0,   1.5,   2.0,   2.5,   5.0,    10.0,
    15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const Histogram::BucketBoundaries kLagBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                 0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                                 1.0,    2.5,     5.0,    10.0};

constexpr double kNsPerS = 1e9;

// civetweb serves one connection per thread, and a thread waits up to request_timeout_ms for a
// request's headers. With prometheus-cpp's defaults (2 threads, 30 s) 250 idle connections
// (slowloris) starved /metrics for an hour. Here an idle or dribbling client
// holds a thread at most kRequestTimeoutMs, and at most kHttpThreads + kConnectionQueue
// connections are held at once (the rest wait in the kernel's backlog): a real scrape behind
// 250 idle connections is answered in about 250 / 64 x 0.5 s = 2 s. The run's own threads are
// untouched either way.
constexpr int kHttpThreads = 64;
constexpr int kRequestTimeoutMs = 500;
constexpr int kConnectionQueue = 64;

std::vector<std::string> server_options(const std::string& address) {
  return {"listening_ports",    address,
          "num_threads",        std::to_string(kHttpThreads),
          "request_timeout_ms", std::to_string(kRequestTimeoutMs),
          "connection_queue",   std::to_string(kConnectionQueue),
          "enable_keep_alive",  "no"};
}

// output.metrics_listen as civetweb's listening_ports wants it: "*" is every IPv4 interface.
std::string civetweb_address(const std::string& listen) {
  if (listen.rfind("*:", 0) == 0) return "0.0.0.0" + listen.substr(1);
  return listen;
}

// Why civetweb could not listen (it only says "null context"): the same bind, made here, tells
// the errno; a bind that works here means civetweb itself cannot (IPv6 in Debian's build).
std::string listen_failure(const std::string& listen) {
  const std::string address = civetweb_address(listen);
  const size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  const int port = std::stoi(address.substr(colon + 1));
  const bool v6 = host.size() > 2 && host.front() == '[';
  if (v6) host = host.substr(1, host.size() - 2);
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET6, host.c_str(), &a->sin6_addr);
    length = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &a->sin_addr);
    length = sizeof *a;
  }
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int error = fd < 0 ? errno : 0;
  if (fd >= 0) {
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as civetweb does
    if (::bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0) error = errno;
    ::close(fd);
  }
  std::string why = "output.metrics_listen " + listen + ": cannot listen: ";
  if (error == EADDRINUSE) {
    return why + std::strerror(error) +
           " (another process listens there: pick another port, or port 0 for a free one)";
  }
  if (error == EADDRNOTAVAIL) {
    return why + std::strerror(error) + " (no interface of this host has that address)";
  }
  if (error != 0) return why + std::strerror(error);
  if (v6) {
    return why + "the HTTP server prometheus-cpp uses (civetweb) was built without IPv6 here: " +
           "listen on an IPv4 address, for example 127.0.0.1:9464";
  }
  return why + "the HTTP server (civetweb) refused the address";
}

}  // namespace

struct StageSeries {
  std::string name;
  Histogram* ttft = nullptr;
  Histogram* itl = nullptr;
  Histogram* latency = nullptr;
  Histogram* lag = nullptr;
  Counter* output_tokens = nullptr;
};

struct WorkerSeries {
  std::string id;
  std::vector<std::array<Counter*, kOutcomes>> requests;  // [stage index][outcome]
  Gauge* in_flight = nullptr;
};

struct LiveMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  Family<Counter>& requests = prometheus::BuildCounter()
                                  .Name("convoy_requests_total")
                                  .Help(
                                      "Requests ended, by outcome (ok or the error kind), "
                                      "load-profile stage and worker")
                                  .Register(*registry);
  Family<Gauge>& requests_in_flight =
      prometheus::BuildGauge()
          .Name("convoy_requests_in_flight")
          .Help("Requests in flight on each worker, as of its last heartbeat")
          .Register(*registry);
  Family<Counter>& conversations_started = prometheus::BuildCounter()
                                               .Name("convoy_conversations_started_total")
                                               .Help("Conversations whose first request ended")
                                               .Register(*registry);
  Family<Counter>& conversations_finished =
      prometheus::BuildCounter()
          .Name("convoy_conversations_finished_total")
          .Help("Conversations ended, by reason (completed, aborted, cancelled, failed, lost)")
          .Register(*registry);
  Family<Gauge>& conversations_in_flight =
      prometheus::BuildGauge()
          .Name("convoy_conversations_in_flight")
          .Help("Conversations started by their worker and not yet ended")
          .Register(*registry);
  Family<Counter>& output_tokens = prometheus::BuildCounter()
                                       .Name("convoy_output_tokens_total")
                                       .Help("Output tokens received, by stage")
                                       .Register(*registry);
  Family<Histogram>& ttft = prometheus::BuildHistogram()
                                .Name("convoy_time_to_first_token_seconds")
                                .Help("Time to first token of successful requests, by stage")
                                .Register(*registry);
  Family<Histogram>& itl = prometheus::BuildHistogram()
                               .Name("convoy_inter_token_latency_seconds")
                               .Help(
                                   "Inter-token latency of successful requests ((latency - "
                                   "TTFT) / (output tokens - 1)), by stage")
                               .Register(*registry);
  Family<Histogram>& latency = prometheus::BuildHistogram()
                                   .Name("convoy_request_latency_seconds")
                                   .Help("Request latency of successful requests, by stage")
                                   .Register(*registry);
  Family<Histogram>& lag = prometheus::BuildHistogram()
                               .Name("convoy_schedule_lag_seconds")
                               .Help("Sent minus intended time of every sent request, by stage")
                               .Register(*registry);
  Family<Gauge>& workers =
      prometheus::BuildGauge().Name("convoy_workers").Help("Workers by state").Register(*registry);
  Family<Gauge>& stage_info = prometheus::BuildGauge()
                                  .Name("convoy_stage_info")
                                  .Help("The stage now running (value 1) and its mode")
                                  .Register(*registry);
  Family<Gauge>& stage_target =
      prometheus::BuildGauge()
          .Name("convoy_stage_target")
          .Help(
              "The current stage's target: conversations in flight (mode concurrency) or new "
              "conversations per second (mode rate)")
          .Register(*registry);
  Family<Gauge>& run_info = prometheus::BuildGauge()
                                .Name("convoy_run_info")
                                .Help("The run (value 1): its id and convoy's version")
                                .Register(*registry);

  Counter* started = nullptr;
  std::map<std::string, Counter*, std::less<>> finished;
  Gauge* in_flight_conversations = nullptr;
  std::map<std::string, Gauge*, std::less<>> worker_states;
  std::map<std::string, std::unique_ptr<WorkerSeries>, std::less<>> worker_series;
  std::vector<StageSeries> stages;
  Gauge* current_info = nullptr;
  Gauge* current_target = nullptr;
  std::string current_stage;
  std::string current_mode;
  std::string host;                              // as logged
  std::unique_ptr<prometheus::Exposer> exposer;  // last: stops serving before the rest goes

  size_t stage_index(std::string_view name) {
    for (size_t i = 0; i < stages.size(); ++i) {
      if (stages[i].name == name) return i;
    }
    StageSeries& s = stages.emplace_back();
    s.name = std::string(name);
    const prometheus::Labels labels = {{"stage", s.name}};
    s.ttft = &ttft.Add(labels, kTtftBuckets);
    s.itl = &itl.Add(labels, kItlBuckets);
    s.latency = &latency.Add(labels, kLatencyBuckets);
    s.lag = &lag.Add(labels, kLagBuckets);
    s.output_tokens = &output_tokens.Add(labels);
    return stages.size() - 1;
  }
};

LiveMetrics::LiveMetrics(const std::string& listen, std::string_view run_id)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.started = &m.conversations_started.Add({});
  m.in_flight_conversations = &m.conversations_in_flight.Add({});
  m.run_info.Add({{"run_id", std::string(run_id)}, {"version", build_info::version()}}).Set(1);
  const std::string address = civetweb_address(listen);
  m.host = address.substr(0, address.rfind(':'));
  try {
    m.exposer = std::make_unique<prometheus::Exposer>(server_options(address));
  } catch (const std::exception&) {
    throw ListenError(listen_failure(listen));
  }
  m.exposer->RegisterCollectable(m.registry);
}

namespace {

// One TCP connection to host:port, closed at once (the host as civetweb was given it: brackets
// around IPv6, a wildcard means this host's loopback).
void poke(std::string host, int port) {
  const bool v6 = host.size() > 2 && host.front() == '[';
  if (v6) host = host.substr(1, host.size() - 2);
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET6, host.c_str(), &a->sin6_addr) != 1) return;
    length = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    if (::inet_pton(AF_INET, host.c_str(), &a->sin_addr) != 1) return;
    length = sizeof *a;
  }
  const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&storage), length);
  ::close(fd);
}

}  // namespace

LiveMetrics::~LiveMetrics() {
  if (!impl_ || !impl_->exposer) return;
  // civetweb's listener polls its sockets in 2 s quanta and sees the stop only when a poll
  // returns, so every run with output.metrics_listen ended 2 s late. Connections to its port
  // while it stops wake it at once.
  const int port = this->port();
  std::atomic<bool> stopped{false};
  std::thread waker([&] {
    while (!stopped.load()) {
      poke(impl_->host, port);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  impl_->exposer.reset();
  stopped = true;
  waker.join();
}

int LiveMetrics::port() const {
  const auto ports = impl_->exposer->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

std::string LiveMetrics::url() const {
  return "http://" + impl_->host + ":" + std::to_string(port()) + "/metrics";
}

std::string LiveMetrics::text() const {
  return prometheus::TextSerializer().Serialize(impl_->registry->Collect());
}

WorkerSeries& LiveMetrics::worker(std::string_view worker_id) {
  auto it = impl_->worker_series.find(worker_id);
  if (it == impl_->worker_series.end()) {
    auto series = std::make_unique<WorkerSeries>();
    series->id = std::string(worker_id);
    series->in_flight = &impl_->requests_in_flight.Add({{"worker", series->id}});
    it = impl_->worker_series.emplace(series->id, std::move(series)).first;
  }
  return *it->second;
}

void LiveMetrics::on_record(WorkerSeries& worker, std::string_view stage,
                            const proto::Record& record) {
  on_record(worker, stage, record, controller::compute_request_metrics(record));
}

void LiveMetrics::on_record(WorkerSeries& worker, std::string_view stage,
                            const proto::Record& record, const controller::RequestMetrics& r) {
  if (proto::session_release_only(record)) return;
  Impl& m = *impl_;
  if (stage.empty()) stage = record.phase == proto::Phase::kWarmup ? "warmup" : "measure";
  const size_t s = m.stage_index(stage);
  if (worker.requests.size() <= s) worker.requests.resize(s + 1, {});
  const size_t outcome =
      std::min(static_cast<size_t>(record.error.kind), static_cast<size_t>(kOutcomes - 1));
  Counter*& requests = worker.requests[s][outcome];
  if (requests == nullptr) {
    const std::string_view name = record.error.kind == proto::ErrorKind::kNone
                                      ? std::string_view("ok")
                                      : proto::to_string(record.error.kind);
    requests = &m.requests.Add(
        {{"outcome", std::string(name)}, {"stage", m.stages[s].name}, {"worker", worker.id}});
  }
  requests->Increment();
  StageSeries& series = m.stages[s];
  if (record.output_tokens > 0)
    series.output_tokens->Increment(static_cast<double>(record.output_tokens));
  // The same definitions as summary.json's (controller/report/metrics.cpp).
  // Lag below zero is clock-offset noise (sent before the intended time): the first bucket.
  if (r.schedule_lag_ns)
    series.lag->Observe(std::max(0.0, static_cast<double>(*r.schedule_lag_ns) / kNsPerS));
  if (!r.ok) return;
  if (r.ttft_ns) series.ttft->Observe(static_cast<double>(*r.ttft_ns) / kNsPerS);
  if (r.itl_ns) series.itl->Observe(*r.itl_ns / kNsPerS);
  if (r.request_latency_ns) {
    series.latency->Observe(static_cast<double>(*r.request_latency_ns) / kNsPerS);
  }
}

void LiveMetrics::linger(double seconds, const std::function<bool()>& stop) const {
  if (!(seconds > 0)) return;
  log_info("keeping ", url(), " up for ", seconds, " s (output.metrics_linger_s; Ctrl-C ends it)");
  // Sleeping is the point here: nothing is left to do but answer scrapes, which civetweb's
  // threads do. The step bounds how late a signal is noticed.
  constexpr auto kStep = std::chrono::milliseconds(50);
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(seconds));
  while (!stop()) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(left, kStep));
  }
}

void LiveMetrics::set_requests_in_flight(WorkerSeries& worker, int64_t requests) {
  worker.in_flight->Set(static_cast<double>(requests));
}

void LiveMetrics::on_conversation_started() { impl_->started->Increment(); }

void LiveMetrics::on_conversation_finished(std::string_view reason) {
  auto it = impl_->finished.find(reason);
  if (it == impl_->finished.end()) {
    Counter* c = &impl_->conversations_finished.Add({{"reason", std::string(reason)}});
    it = impl_->finished.emplace(std::string(reason), c).first;
  }
  it->second->Increment();
}

void LiveMetrics::on_conversation_finished(proto::EndReason reason) {
  switch (reason) {
    case proto::EndReason::kCompleted:
      return on_conversation_finished("completed");
    case proto::EndReason::kAborted:
      return on_conversation_finished("aborted");
    case proto::EndReason::kCancelled:
      return on_conversation_finished("cancelled");
  }
  on_conversation_finished("completed");
}

void LiveMetrics::set_conversations_in_flight(size_t conversations) {
  impl_->in_flight_conversations->Set(static_cast<double>(conversations));
}

void LiveMetrics::set_workers(std::string_view state, size_t workers) {
  auto it = impl_->worker_states.find(state);
  if (it == impl_->worker_states.end()) {
    Gauge* g = &impl_->workers.Add({{"state", std::string(state)}});
    it = impl_->worker_states.emplace(std::string(state), g).first;
  }
  it->second->Set(static_cast<double>(workers));
}

void LiveMetrics::set_stage(std::string_view name, std::string_view mode, double target) {
  Impl& m = *impl_;
  if (m.current_info) m.stage_info.Remove(m.current_info);
  if (m.current_target) m.stage_target.Remove(m.current_target);
  m.current_stage = std::string(name);
  m.current_mode = std::string(mode);
  const prometheus::Labels labels = {{"stage", m.current_stage}, {"mode", m.current_mode}};
  m.current_info = &m.stage_info.Add(labels);
  m.current_info->Set(1);
  m.current_target = nullptr;
  set_stage_target(target);
}

void LiveMetrics::set_stage_target(double target) {
  Impl& m = *impl_;
  if (std::isnan(target) || m.current_stage.empty()) return;
  if (!m.current_target) {
    m.current_target = &m.stage_target.Add({{"stage", m.current_stage}, {"mode", m.current_mode}});
  }
  m.current_target->Set(target);
}

}  // namespace convoy::live
