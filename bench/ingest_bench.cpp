// The controller's ingest path, in-process on one core: result batches encoded exactly as a
// worker sends them on PUSH are decoded (proto::decode_in_place + Results), moved onto the
// controller's clock, checked, and handed to the run's record pipeline with the outputs every run
// has (the whole run's MetricsAggregator, RunFacts, records.jsonl): the same path as a run's.
// Prints records/s overall and per stage, and the resident memory at each quarter of the run (it
// must stay flat: histograms are fixed-size, records stream to disk). The headline figure is
// records per second of this thread's CPU time (one core's worth).
//
// Usage: ingest_bench [--seconds S | --records N] [--records-per-batch N] [--gaps N] [--out PATH]
//                     [--scrape URLS]
//   --out defaults to /dev/null (the CPU cost of formatting; the page cache absorbs a real file).
//   --scrape: a file of Prometheus endpoint URLs, one per line (telemetry_bench --serve-only
//   prints them); the controller's scraper thread (Telemetry) scrapes them every second during
//   the run, as in a run with `telemetry:`, so the figure shows what scraping costs ingest.
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/records_writer.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/report/run_report.hpp"
#include "controller/run/record_outputs.hpp"
#include "controller/run/record_pipeline.hpp"
#include "controller/telemetry/telemetry.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using convoy::controller::FactsOutput;
using convoy::controller::MetricsAggregator;
using convoy::controller::RecordBounds;
using convoy::controller::RecordPipeline;
using convoy::controller::RecordsFileOutput;
using convoy::controller::RunFacts;
using convoy::controller::RunMetricsOutput;

struct Options {
  double seconds = 3;
  size_t records_per_batch = 256;
  size_t gaps = 63;  // a 64-token streamed reply
  std::string out = "/dev/null";
  uint64_t max_records = 0;  // > 0: stop after this many (fixed work, for callgrind)
  std::string scrape;        // a file of endpoint URLs to scrape during the run
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--seconds") {
      o.seconds = std::atof(value);
    } else if (flag == "--records-per-batch") {
      o.records_per_batch = static_cast<size_t>(std::atol(value));
    } else if (flag == "--gaps") {
      o.gaps = static_cast<size_t>(std::atol(value));
    } else if (flag == "--records") {
      o.max_records = static_cast<uint64_t>(std::atoll(value));
    } else if (flag == "--out") {
      o.out = value;
    } else if (flag == "--scrape") {
      o.scrape = value;
    } else {
      std::fprintf(stderr, "ingest_bench: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

std::string uuid_like(uint64_t n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-1d2e-4f30-8a41-%012llx",
                static_cast<unsigned long long>(n & 0xffffffffULL),
                static_cast<unsigned long long>(n * 2654435761ULL & 0xffffffffffffULL));
  return buf;
}

// A successful streamed chat request as a worker reports it.
convoy::proto::Record make_record(uint64_t n, size_t gaps) {
  convoy::proto::Record r;
  r.x_request_id = uuid_like(n * 7 + 1);
  r.x_correlation_id = uuid_like(n / 4);
  r.conversation_id = "conv-" + std::to_string(n / 4);
  r.conversation_index = n / 4;
  r.turn_index = static_cast<uint32_t>(n % 4);
  r.final_turn = n % 4 == 3;
  const int64_t base = 1'000'000'000 + static_cast<int64_t>(n) * 50'000;
  r.intended_ns = base;
  r.sent_ns = base + 20'000 + static_cast<int64_t>(n % 97) * 1'000;
  r.first_byte_ns = r.sent_ns + 30'000'000;
  r.first_token_ns = r.first_byte_ns + 100'000;
  int64_t t = r.first_token_ns;
  for (size_t i = 0; i < gaps; ++i) {
    const int64_t gap = 10'000'000 + static_cast<int64_t>((n + i) % 13) * 250'000;
    r.chunk_gaps_ns.push_back(gap);
    t += gap;
    if (i == 0) r.second_token_ns = t;
  }
  r.last_token_ns = t;
  r.end_ns = t + 200'000;
  r.input_tokens = 512;
  r.output_tokens = static_cast<int64_t>(gaps) + 1;
  r.cached_tokens = 384;
  r.usage_from_server = true;
  r.http_status = 200;
  r.session_control = {r.x_correlation_id, convoy::proto::SessionAction::kBind, 300, {}};
  return r;
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// The scraper thread of a run with `telemetry:` over the endpoints in `urls_file`.
std::unique_ptr<convoy::telemetry::Telemetry> start_scraping(const std::string& urls_file,
                                                             const std::string& out) {
  convoy::TelemetryConfig config;
  config.max_series = 1'000'000;  // keep every series, as telemetry_bench does
  std::vector<convoy::TelemetryEndpoint> endpoints;
  std::ifstream in(urls_file);
  for (std::string url; std::getline(in, url);) {
    if (url.empty()) continue;
    convoy::TelemetryEndpoint e;
    e.name = "node" + std::to_string(endpoints.size());
    e.url = url;
    endpoints.push_back(e);
  }
  if (endpoints.empty()) {
    std::fprintf(stderr, "ingest_bench: no URLs in %s\n", urls_file.c_str());
    std::exit(2);
  }
  auto telemetry = std::make_unique<convoy::telemetry::Telemetry>(
      config, std::move(endpoints), steady_ns, out + ".server_metrics.jsonl");
  for (const auto& failure : telemetry->wait_first_round()) {
    std::fprintf(stderr, "ingest_bench: %s\n", failure.what.c_str());
  }
  telemetry->start_window(steady_ns());
  return telemetry;
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of this thread: the machine is shared, so wall time overstates the cost.
double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  const convoy::Config config = convoy::parse_config("name: ingest-bench\n", "<ingest_bench>");

  // Distinct batches so the aggregator sees varied values; encoded once, as a worker would.
  constexpr size_t kBatches = 16;
  std::vector<std::string> wire;
  uint64_t n = 0;
  for (size_t b = 0; b < kBatches; ++b) {
    convoy::proto::Results results;
    results.worker_id = "local-0";
    for (size_t i = 0; i < o.records_per_batch; ++i) {
      results.records.push_back(make_record(n++, o.gaps));
    }
    wire.push_back(convoy::proto::encode(results));
  }

  const std::string scrape_out = o.out == "/dev/null" ? "/tmp/ingest_bench" : o.out;
  auto telemetry = o.scrape.empty() ? nullptr : start_scraping(o.scrape, scrape_out);

  MetricsAggregator metrics(config);
  metrics.set_origin_ns(1'000'000'000);
  RunFacts facts;
  RecordPipeline pipeline(facts);
  pipeline.add(std::make_unique<RunMetricsOutput>(metrics));
  pipeline.add(std::make_unique<FactsOutput>(facts));
  pipeline.add(std::make_unique<RecordsFileOutput>(o.out, convoy::proto::TargetSettings{}, 0));
  const RecordBounds bounds{0, INT64_MAX / 2, 1};  // the records' times are all in the run
  const int64_t offset_ns = 12'345;

  double decode_s = 0;
  double pipeline_s = 0;
  uint64_t records = 0;
  long rss_quarters[4] = {-1, -1, -1, -1};
  const auto start = Clock::now();
  const double cpu_start_s = thread_cpu_s();
  for (uint64_t pass = 0;; ++pass) {
    const double elapsed = seconds_since(start);
    if (o.max_records > 0 ? records >= o.max_records : elapsed >= o.seconds) break;
    const auto quarter = static_cast<size_t>(elapsed / o.seconds * 4);
    if (quarter < 4 && rss_quarters[quarter] < 0) rss_quarters[quarter] = rss_kib();

    const std::string& bytes = wire[pass % kBatches];
    const auto t0 = Clock::now();
    std::string error;
    auto decoded = convoy::proto::decode_in_place(bytes.data(), bytes.size(), &error);
    if (!decoded) {
      std::fprintf(stderr, "ingest_bench: decode failed: %s\n", error.c_str());
      return 1;
    }
    auto results = decoded->as<convoy::proto::Results>();
    if (!results) return 1;
    const auto t1 = Clock::now();
    pipeline.on_batch(results->worker_id, "bench-host", offset_ns, results->records, bounds);
    const auto t2 = Clock::now();
    decode_s += std::chrono::duration<double>(t1 - t0).count();
    pipeline_s += std::chrono::duration<double>(t2 - t1).count();
    records += results->records.size();
  }
  const double total_s = seconds_since(start);
  const double cpu_s = thread_cpu_s() - cpu_start_s;
  pipeline.close();
  int64_t scrapes = 0;
  if (telemetry) {
    telemetry->stop();
    const auto endpoints = telemetry->endpoint_stats();
    for (const auto& e : endpoints) scrapes += e.scrapes;
    std::printf("scraped %zu endpoints during the run: %lld scrapes\n", endpoints.size(),
                static_cast<long long>(scrapes));
  }
  const auto per_s = [records](double s) { return s > 0 ? static_cast<double>(records) / s : 0; };
  std::printf("records: %llu in %.2f s wall, %.2f s CPU; %zu per batch, %zu chunk gaps each\n",
              static_cast<unsigned long long>(records), total_s, cpu_s, o.records_per_batch,
              o.gaps);
  std::printf("records/s by wall clock %.0f (the machine is shared: CPU time is the figure)\n",
              per_s(total_s));
  std::printf("stage records/s (wall): decode %.0f, pipeline (aggregate and write) %.0f\n",
              per_s(decode_s), per_s(pipeline_s));
  std::printf("rss_kib by quarter: %ld %ld %ld %ld, end %ld; aggregator %zu bytes\n",
              rss_quarters[0], rss_quarters[1], rss_quarters[2], rss_quarters[3], rss_kib(),
              metrics.memory_bytes());
  std::printf("RESULT ingest_records_per_s=%.0f rss_growth_kib=%ld scrapes=%lld\n", per_s(cpu_s),
              rss_kib() - rss_quarters[1], static_cast<long long>(scrapes));
  return pipeline.failures().empty() ? 0 : 1;
}
