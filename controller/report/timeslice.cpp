#include "controller/report/timeslice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/duration.hpp"

namespace convoy::controller {

namespace {

// Indexed by TimeSliceAggregator::Metric: the whole run's metrics (metric_def), so that a slice
// reads like the summary.
constexpr std::string_view kSliceTags[] = {
    "time_to_first_token",    "time_to_second_token",
    "inter_token_latency",    "inter_chunk_latency",
    "request_latency",        "corrected_request_latency",
    "schedule_lag",           "input_sequence_length",
    "output_sequence_length", "output_token_throughput_per_user",
};

const MetricDef& slice_def(size_t metric) {
  static const auto defs = [] {
    std::array<const MetricDef*, std::size(kSliceTags)> out{};
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = metric_def(kSliceTags[i]);
      if (out[i] == nullptr) throw std::logic_error("no metric " + std::string(kSliceTags[i]));
    }
    return out;
  }();
  return *defs[metric];
}

}  // namespace

TimeSliceAggregator::TimeSliceAggregator(double slice_s, bool has_slo)
    : has_slo_(has_slo), slices_(kMaxSlices, std::max<int64_t>(1, seconds_to_ns(slice_s))) {}

void TimeSliceAggregator::add(int64_t since_origin_ns, const proto::Record& r,
                              const RequestMetrics& m, bool good) {
  Slice& s = slices_.at(since_origin_ns);
  if (r.sent_ns > 0)
    s.first_send_ns = s.first_send_ns == 0 ? r.sent_ns : std::min(s.first_send_ns, r.sent_ns);
  s.last_end_ns = std::max(s.last_end_ns, r.end_ns);
  if (m.schedule_lag_ns) s.histograms[kScheduleLag].record(*m.schedule_lag_ns);
  if (!m.ok) {
    ++s.errors;
    return;
  }
  ++s.requests;
  if (good) ++s.good;
  s.output_tokens += m.osl;
  if (m.ttft_ns) s.histograms[kTtft].record(*m.ttft_ns);
  if (m.ttst_ns) s.histograms[kTtst].record(*m.ttst_ns);
  if (m.itl_ns) s.histograms[kItl].record(std::llround(*m.itl_ns));
  for (int64_t gap : r.chunk_gaps_ns) s.histograms[kIcl].record(gap);
  if (m.request_latency_ns) s.histograms[kRequestLatency].record(*m.request_latency_ns);
  if (m.corrected_request_latency_ns) {
    s.histograms[kCorrectedLatency].record(*m.corrected_request_latency_ns);
  }
  s.histograms[kIsl].record(m.isl);
  s.histograms[kOsl].record(m.osl);
  if (m.output_tokens_per_s_per_user) {
    // Milli-tokens/s, as MetricsAggregator keeps it: the definition's scale.
    const double scale = slice_def(kPerUser).scale;
    s.histograms[kPerUser].record(std::llround(*m.output_tokens_per_s_per_user * scale));
  }
}

void TimeSliceAggregator::Slice::merge(const Slice& o) {
  for (size_t i = 0; i < histograms.size(); ++i) histograms[i].merge(o.histograms[i]);
  requests += o.requests;
  errors += o.errors;
  good += o.good;
  output_tokens += o.output_tokens;
  if (o.first_send_ns > 0) {
    first_send_ns = first_send_ns == 0 ? o.first_send_ns : std::min(first_send_ns, o.first_send_ns);
  }
  last_end_ns = std::max(last_end_ns, o.last_end_ns);
}

TimeSliceStats TimeSliceAggregator::stats_of(size_t index) const {
  const Slice& s = slices_[index];
  TimeSliceStats t;
  t.index = static_cast<int64_t>(index);
  t.start_s = static_cast<double>(index) * slice_s();
  t.end_s = static_cast<double>(index + 1) * slice_s();
  static_assert(std::size(kSliceTags) == kMetricCount);
  for (size_t i = 0; i < kMetricCount; ++i) {
    if (s.histograms[i].empty()) continue;
    const MetricDef& d = slice_def(i);
    t.metrics.push_back(metric_stats(s.histograms[i], d));
  }
  // AIPerf's derived metrics over the slice's own records: its first send to its last end.
  const double duration_s = s.first_send_ns > 0 && s.last_end_ns > s.first_send_ns
                                ? static_cast<double>(s.last_end_ns - s.first_send_ns) / 1e9
                                : 0;
  auto per_s = [&](int64_t n) { return duration_s > 0 ? static_cast<double>(n) / duration_s : 0; };
  t.metrics.push_back(single_value("output_token_throughput", per_s(s.output_tokens)));
  t.metrics.push_back(single_value("request_throughput", per_s(s.requests)));
  if (has_slo_) t.metrics.push_back(single_value("goodput", per_s(s.good)));
  t.metrics.push_back(single_value("request_count", static_cast<double>(s.requests)));
  t.metrics.push_back(single_value("error_request_count", static_cast<double>(s.errors)));
  t.metrics.push_back(single_value("benchmark_duration", duration_s));
  return t;
}

std::vector<TimeSliceStats> TimeSliceAggregator::snapshot() const {
  std::vector<TimeSliceStats> out;
  out.reserve(slices_.size());
  for (size_t i = 0; i < slices_.size(); ++i) out.push_back(stats_of(i));
  return out;
}

size_t TimeSliceAggregator::memory_bytes() const {
  size_t bytes = sizeof(*this) + slices_.memory_bytes() - slices_.size() * sizeof(Slice);
  for (const Slice& s : slices_.points()) {
    bytes += sizeof(Slice) - sizeof(s.histograms);
    for (const auto& h : s.histograms) bytes += h.memory_bytes();
  }
  return bytes;
}

namespace {

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  if (v == std::trunc(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", v);
  return buffer;
}

}  // namespace

std::string timeslices_csv(const std::vector<TimeSliceStats>& slices) {
  std::ostringstream out;
  out << "timeslice,start_s,end_s,metric,unit,stat,value\n";
  for (const TimeSliceStats& t : slices) {
    const std::string head =
        std::to_string(t.index) + ',' + csv_number(t.start_s) + ',' + csv_number(t.end_s) + ',';
    for (const MetricStats& m : t.metrics) {
      auto row = [&](const char* stat, double v) {
        out << head << m.tag << ',' << m.unit << ',' << stat << ',' << csv_number(v) << '\n';
      };
      row("avg", m.avg);
      if (m.aggregate) continue;
      row("min", m.min);
      row("max", m.max);
      row("sum", m.sum);
      for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
        row(kPercentileKeys[i], m.percentiles[i]);
      }
      row("std", m.std);
      row("count", static_cast<double>(m.count));
    }
  }
  return out.str();
}

}  // namespace convoy::controller
