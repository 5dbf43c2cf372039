#include "controller/report/server_timing.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>

#include "controller/report/session_routing_json.hpp"

namespace convoy::controller {

namespace {

std::optional<double> reported(double ms) {
  if (!(ms >= 0) || !std::isfinite(ms)) return std::nullopt;
  return ms;
}

constexpr double kNsPerMsD = 1e6;

int64_t to_us(double ms) { return std::llround(ms * 1000.0); }

}  // namespace

std::optional<RequestServerTiming> request_server_timing(const proto::Record& record,
                                                         const RequestMetrics& m) {
  const proto::ServerTiming& t = record.server_timing;
  if (!t.present()) return std::nullopt;
  RequestServerTiming out;
  out.queue_ms = reported(t.queue_ms);
  out.prefill_ms = reported(t.prefill_ms);
  out.ttft_ms = reported(t.ttft_ms);
  out.total_ms = reported(t.total_ms);
  out.itl_ms = reported(t.avg_itl_ms);
  if (!out.itl_ms && out.ttft_ms && out.total_ms && m.osl > 1) {
    out.itl_ms = (*out.total_ms - *out.ttft_ms) / static_cast<double>(m.osl - 1);
  }
  if (out.ttft_ms && m.ttft_ns) {
    out.ttft_gap_ms = static_cast<double>(*m.ttft_ns) / kNsPerMsD - *out.ttft_ms;
  }
  if (out.total_ms && m.request_latency_ns) {
    out.latency_gap_ms = static_cast<double>(*m.request_latency_ns) / kNsPerMsD - *out.total_ms;
  }
  return out;
}

void ServerTimingAggregator::add(const proto::Record& record, const RequestMetrics& m) {
  const std::optional<RequestServerTiming> t = request_server_timing(record, m);
  if (!t) {
    ++without_;
    return;
  }
  ++with_;
  const std::optional<double> parts[kParts] = {t->queue_ms,      t->prefill_ms, t->ttft_ms,
                                               t->itl_ms,        t->total_ms,   t->ttft_gap_ms,
                                               t->latency_gap_ms};
  for (size_t i = 0; i < kParts; ++i) {
    if (parts[i]) us_[i].record(to_us(*parts[i]));
  }
}

ServerTimingSummary ServerTimingAggregator::summary() const {
  static constexpr MetricDef kDefs[kParts] = {
      {"server_queue_time", "Server Queue Time", "ms", 1000.0},
      {"server_prefill_time", "Server Prefill Time", "ms", 1000.0},
      {"server_time_to_first_token", "Server Time to First Token", "ms", 1000.0},
      {"server_inter_token_latency", "Server Inter Token Latency", "ms", 1000.0},
      {"server_request_latency", "Server Request Latency", "ms", 1000.0},
      {"ttft_client_minus_server", "TTFT, Client minus Server", "ms", 1000.0},
      {"request_latency_client_minus_server", "Request Latency, Client minus Server", "ms", 1000.0},
  };
  ServerTimingSummary s;
  s.requests = with_;
  s.requests_without_timing = without_;
  std::optional<MetricStats>* slots[kParts] = {&s.queue, &s.prefill,  &s.ttft,       &s.itl,
                                               &s.total, &s.ttft_gap, &s.latency_gap};
  for (size_t i = 0; i < kParts; ++i) {
    if (!us_[i].empty()) *slots[i] = metric_stats(us_[i], kDefs[i]);
  }
  return s;
}

size_t ServerTimingAggregator::memory_bytes() const {
  size_t n = sizeof(*this);
  for (const Histogram& h : us_) n += h.memory_bytes();
  return n;
}

std::string server_timing_json(const ServerTimingSummary& s) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartObject();
  w.Key("requests");
  w.Int64(s.requests);
  w.Key("requests_without_timing");
  w.Int64(s.requests_without_timing);
  write_metric_stats(w, "server_queue_time", s.queue);
  write_metric_stats(w, "server_prefill_time", s.prefill);
  write_metric_stats(w, "server_time_to_first_token", s.ttft);
  write_metric_stats(w, "server_inter_token_latency", s.itl);
  write_metric_stats(w, "server_request_latency", s.total);
  write_metric_stats(w, "ttft_client_minus_server", s.ttft_gap);
  write_metric_stats(w, "request_latency_client_minus_server", s.latency_gap);
  w.EndObject();
  return {sb.GetString(), sb.GetSize()};
}

}  // namespace convoy::controller
