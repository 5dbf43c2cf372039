// The server's own timing of each request beside the client's (target.server_timing, or
// session_routing.verify): Dynamo's nvext.timing per request (proto::ServerTiming), folded
// into distributions of the server's queue, prefill, TTFT, ITL and total time, and of the
// client-minus-server gap per request: what the network, the frontend's HTTP side and the
// client add to TTFT and to the request's latency. Measured per request, not guessed from two
// histograms.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/histogram.hpp"
#include "controller/report/metrics.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// One request's server timing and its gaps (ms); nullopt where the server did not report the
// part (or, for a gap, where the client has no value to compare).
struct RequestServerTiming {
  std::optional<double> queue_ms;        // prefill_wait_time_ms
  std::optional<double> prefill_ms;      // prefill_time_ms
  std::optional<double> ttft_ms;         // ttft_ms
  std::optional<double> total_ms;        // total_time_ms
  std::optional<double> itl_ms;          // avg_itl_ms, else (total - ttft) / (osl - 1), osl > 1
  std::optional<double> ttft_gap_ms;     // client TTFT - server TTFT
  std::optional<double> latency_gap_ms;  // client request_latency - server total_time_ms
};
// nullopt when the record carries no server timing.
std::optional<RequestServerTiming> request_server_timing(const proto::Record& record,
                                                         const RequestMetrics& m);

// Successful measured requests only (the caller passes those). Microsecond histograms: a gap may
// be negative (a server that counts from an earlier point than the client's send).
class ServerTimingAggregator {
 public:
  void add(const proto::Record& record, const RequestMetrics& m);
  ServerTimingSummary summary() const;
  size_t memory_bytes() const;

 private:
  enum Part : size_t { kQueue, kPrefill, kTtft, kItl, kTotal, kTtftGap, kLatencyGap, kParts };
  int64_t with_ = 0;
  int64_t without_ = 0;
  std::array<Histogram, kParts> us_;
};

// {requests, requests_without_timing, server_queue_time: {unit, avg, min, max, p1..p99, std,
// count, sum} | null, server_prefill_time, server_time_to_first_token,
// server_inter_token_latency, server_request_latency, ttft_client_minus_server,
// request_latency_client_minus_server}.
std::string server_timing_json(const ServerTimingSummary& s);

}  // namespace convoy::controller
