// output.metrics_listen: the run served live on /metrics in the Prometheus text format, so a
// soak test can be watched in Prometheus and Grafana beside the cluster's own metrics. The
// series (docs/metrics.md, "Live metrics") live in a prometheus-cpp registry; its exposer
// (civetweb) answers scrapes on threads of its own. The run loop calls the plain methods
// below; every update is an atomic add or a short lock inside prometheus-cpp, and label children
// are created once and cached, so a record costs no allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "proto/messages.hpp"

namespace convoy::controller {
struct RequestMetrics;
}  // namespace convoy::controller

namespace convoy::live {

// The listen address could not be served (in use, not this host's, IPv6 without support). The
// run turns it into exit 3 before anything starts, as it does for workers.listen.
class ListenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One worker's label children, cached (live_metrics.cpp).
struct WorkerSeries;

class LiveMetrics {
 public:
  // Serves /metrics on `listen` (output.metrics_listen: IPV4:PORT or *:PORT; port 0 takes a
  // free one) until destroyed. Throws ListenError saying why it cannot.
  LiveMetrics(const std::string& listen, std::string_view run_id);
  ~LiveMetrics();
  LiveMetrics(const LiveMetrics&) = delete;
  LiveMetrics& operator=(const LiveMetrics&) = delete;

  int port() const;          // the port it listens on (the real one when 0 was asked)
  std::string url() const;   // http://HOST:PORT/metrics
  std::string text() const;  // what a scrape gets now

  // The worker's series; the reference stays valid for the LiveMetrics' life. One lookup per
  // result batch, not per record.
  WorkerSeries& worker(std::string_view worker_id);
  // One request ended. `stage`: its load-profile stage ("" outside a profile: "warmup" or
  // "measure" by its phase). final_marker's close requests are not counted (no metric has them).
  // `metrics` is compute_request_metrics(record), computed once by the caller.
  void on_record(WorkerSeries& worker, std::string_view stage, const proto::Record& record,
                 const controller::RequestMetrics& metrics);
  void on_record(WorkerSeries& worker, std::string_view stage, const proto::Record& record);
  // The worker's requests in flight, as its last heartbeat said.
  void set_requests_in_flight(WorkerSeries& worker, int64_t requests);

  void on_conversation_started();
  // reason: completed, aborted, cancelled (the worker's), failed (never sent), lost (its
  // worker was lost).
  void on_conversation_finished(std::string_view reason);
  void on_conversation_finished(proto::EndReason reason);  // completed, aborted, cancelled
  void set_conversations_in_flight(size_t conversations);

  // Workers in `state` (connecting, ready, running, stopping, lost, done).
  void set_workers(std::string_view state, size_t workers);

  // The stage now running ("warmup", "measure" or a profile's stage), its mode (concurrency,
  // rate or trace) and its target level (conversations in flight, or new conversations per
  // second; NaN: none). The previous stage's info and target series are removed.
  void set_stage(std::string_view name, std::string_view mode, double target);
  void set_stage_target(double target);  // a ramp's level now

  // output.metrics_linger_s: keeps serving what the series hold now (the run is over, so its
  // final counters) for `seconds` (0: returns at once), so that a scrape after the run's end
  // still sees them; says so on the console.
  // Returns early, within 50 ms, once `stop()` says so (a signal: Ctrl-C ends the wait at once).
  // Waits on the caller's thread; scrapes are answered on the exposer's own threads meanwhile.
  void linger(double seconds, const std::function<bool()>& stop) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::live
