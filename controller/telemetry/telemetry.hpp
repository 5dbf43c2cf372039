// Server telemetry during a run: the controller scrapes Prometheus text endpoints on a thread
// of their own (libcurl multi), so a slow or dead endpoint never delays scheduling or ingest.
// Each scrape is stamped on the run's clock (the one records are moved onto), written to
// server_metrics.jsonl as it arrives, and folded into bounded per-series statistics for
// summary.json's "server_metrics".
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <curl/curl.h>

#include "common/curl_handle.hpp"
#include "controller/config/config.hpp"
#include "controller/report/jsonl_writer.hpp"
#include "controller/report/output_file.hpp"
#include "controller/report/server_metrics_view.hpp"
#include "controller/telemetry/series_store.hpp"

namespace convoy::telemetry {

// A reply larger than this is a scrape error, never parsed: the bytes one scrape may parse, and
// so its peak memory (the reply, its parsed samples and its server_metrics.jsonl line: an
// 11.4 MB, 250,000-series reply peaked the run at 164 MB; a 46 MB, 1,000,000-series one took
// 375 MB when the bound was 64 MiB, 37 MB now that it is refused; docs/benchmarks.md (k)).
// telemetry.max_series bounds what is kept, this what is read. Real endpoints are far smaller: a
// vLLM or Dynamo frontend some 100 KB, a DCGM exporter on 8 GPUs about 200 KB.
inline constexpr size_t kMaxScrapeBytes = size_t{16} << 20;

// The endpoints a run scrapes: telemetry.endpoints, plus with target.url mock the bundled
// mock's own /metrics (name "mock", not required) unless an endpoint is already named so.
// `resolved_url` is the target's URL as the run uses it (the mock's address).
std::vector<TelemetryEndpoint> run_endpoints(const Config& config, const std::string& resolved_url);

class Telemetry {
 public:
  // Starts scraping every endpoint at once, then every interval_s, on a thread named
  // "convoy-scrape" (top -H, the benchmark). `clock` is the run's (steady nanoseconds) and is
  // called from the scraper thread. Throws std::runtime_error when
  // `jsonl_path` cannot be created.
  Telemetry(const TelemetryConfig& config, std::vector<TelemetryEndpoint> endpoints,
            std::function<int64_t()> clock, const std::filesystem::path& jsonl_path);
  ~Telemetry();  // stops at once (no final scrape)
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  // Waits until every endpoint's first scrape ended (at most timeout_s + 1 s). Returns, for
  // each endpoint whose first scrape failed, "NAME (URL): error" with whether it is required.
  struct StartFailure {
    std::string what;
    bool required = false;
  };
  // Waits for the first scrape of every endpoint (at most timeout_s + 1 s), or until
  // `cancelled` says so (Ctrl-C: polled every 100 ms).
  std::vector<StartFailure> wait_first_round(bool (*cancelled)() = nullptr);

  // The measured window starts at `t_ns` (the run's clock).
  // These three are called by the run loop and return at once: the event is queued and the
  // scraper thread applies it before it folds in its next scrape (server_metrics() applies any
  // left). Starting the window touches every series (50,000 in bench (j)): done by the run loop,
  // it held back the first conversations of the measure by up to 12 ms.
  void start_window(int64_t t_ns);
  // A load profile's stage starts at `t_ns`; its settle starts at `t_ns` (ends the stage's
  // window). summary.json's metrics get `stages[]` over each stage's window.
  void mark_stage(std::string name, int64_t t_ns);
  void mark_settle(int64_t t_ns);
  // One last scrape of every endpoint (bounded by timeout_s), then the thread ends and
  // server_metrics.jsonl is closed. Idempotent. With final_scrape false (an interrupted run) the
  // thread ends at once, abandoning any scrape in flight, however slow its endpoint.
  void stop(bool final_scrape = true);

  // summary.json's "server_metrics", typed (SeriesStore::server_metrics), with any queued
  // window events applied.
  controller::ServerMetrics server_metrics();
  // The results the run hands the report (after stop()): server_metrics() and the view the
  // report reads, built once here.
  std::shared_ptr<const controller::ServerTelemetry> results();
  // server_metrics.jsonl could not be written completely (after stop()).
  std::optional<controller::OutputError> output_failure() const;
  // For tests and the report: a copy of the per-endpoint counts so far.
  std::vector<EndpointStats> endpoint_stats() const;

 private:
  struct Target;
  enum StartWhich { kNone, kDue, kAll };
  void run();                                       // the scraper thread
  size_t start_due(int64_t now, StartWhich which);  // returns the transfers in flight
  int64_t poll_wait_ms();
  void on_done(CURL* easy, CURLcode code);
  std::string scrape_error(const Target& t, CURLcode code) const;
  // The scrape's server_metrics.jsonl line (without its newline), in line_.
  const std::string& scrape_line(const Target& t, size_t index, int64_t done_ns,
                                 const std::string& error, const ParseResult& parsed,
                                 std::span<const Sample> batch, int64_t dropped);
  void finish_thread();

  TelemetryConfig config_;
  std::function<int64_t()> clock_;
  std::vector<std::unique_ptr<Target>> targets_;
  controller::JsonlWriter jsonl_;  // server_metrics.jsonl, unbuffered: a line per scrape
  // The window events the run loop queued (start_window, mark_stage, mark_settle), in order.
  struct WindowEvent {
    enum Kind { kStartWindow, kStage, kSettle } kind;
    std::string stage;
    int64_t t_ns;
  };
  void apply_window_events();  // with mutex_ held
  std::mutex events_mutex_;    // guards pending_events_ only; never held for long
  std::vector<WindowEvent> pending_events_;
  // Guards store_ and the first-round state; taken before events_mutex_.
  mutable std::mutex mutex_;
  std::condition_variable first_round_cv_;
  SeriesStore store_;
  size_t first_round_done_ = 0;
  std::atomic<int> stop_{0};  // 1: final scrape then end; 2: end now
  CurlMulti multi_;
  // The scrape being handled: its first batch_size_ (scraper thread only; kept between scrapes
  // so the samples' strings are reused).
  std::vector<Sample> batch_;
  size_t batch_size_ = 0;
  // server_metrics.jsonl: each series' sample text up to its value, by series index (at most
  // max_series), and the line being written (scraper thread only).
  std::vector<std::string> sample_prefix_;
  std::string line_;
  CpuSlices slices_;  // the scraper thread yields between slices of a scrape's work
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace convoy::telemetry
