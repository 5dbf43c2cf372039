// output.slice_s: the run's metrics cut into consecutive time slices, AIPerf's
// --slice-duration. summary.json gets "timeslices": [{index, start_s, end_s, <metric tags>}] and
// the run folder timeslices.csv.
//
// AIPerf's rule, followed here: a record belongs to the slice of its request start,
// floor(request_start / slice_duration) (ai-dynamo/aiperf
// src/aiperf/post_processors/timeslice_metric_results_processor.py, get_timeslice_index), and a
// slice's derived metrics (throughputs, duration) come from its own records only (its first send
// to its last end), as a whole run's do. Counted from the origin of the over-time series (the
// measure start), not from the epoch, so slice 0 starts when the measure does.
//
// Memory: each slice keeps sparse histograms (one count per distinct Histogram bucket seen, at
// most Histogram::kMaxBuckets per metric), never the raw values; past kMaxSlices slices the width
// doubles and neighbouring slices merge exactly, as the over-time series does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/bounded_series.hpp"
#include "common/sparse_histogram.hpp"
#include "controller/report/metrics.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// A slice's histogram: the Histogram family's sparse member (Histogram's buckets and
// statistics, only the buckets in use), with its statistics in display units.
class SparseHistogram : public convoy::SparseHistogram {
 public:
  // In display units: raw / scale (ns -> ms: 1e6).
  MetricStats stats(const char* tag, const char* header, const char* unit, double scale) const {
    return metric_stats(*this, MetricDef{tag, header, unit, scale});
  }
};

class TimeSliceAggregator {
 public:
  static constexpr size_t kMaxSlices = 2048;

  explicit TimeSliceAggregator(double slice_s, bool has_slo = false);

  // One measured record; `since_origin_ns` = its request start (sent, else intended) minus the
  // origin (negative counts in slice 0). `good`: it met every slo (goodput).
  void add(int64_t since_origin_ns, const proto::Record& record, const RequestMetrics& m,
           bool good);

  std::vector<TimeSliceStats> snapshot() const;
  double slice_s() const { return static_cast<double>(slices_.width()) / 1e9; }
  size_t size() const { return slices_.size(); }
  size_t memory_bytes() const;

 private:
  enum Metric : size_t {
    kTtft,
    kTtst,
    kItl,
    kIcl,
    kRequestLatency,
    kCorrectedLatency,
    kScheduleLag,
    kIsl,
    kOsl,
    kPerUser,
    kMetricCount,
  };
  struct Slice {
    std::array<SparseHistogram, kMetricCount> histograms;
    int64_t requests = 0;  // successful
    int64_t errors = 0;
    int64_t good = 0;
    int64_t output_tokens = 0;
    int64_t first_send_ns = 0;  // 0 = none
    int64_t last_end_ns = 0;
    void merge(const Slice& other);  // exact: the histograms' buckets and the counters add
  };
  TimeSliceStats stats_of(size_t index) const;

  bool has_slo_;
  BoundedSeries<Slice, MergeMember> slices_;  // by request start since the origin, width ns
};

// timeslices.csv, tidy like AIPerf's timeslice CSV (src/aiperf/exporters/
// timeslice_metrics_csv_exporter.py: "Timeslice,Metric,Unit,Stat,Value"), with the slice's
// bounds and convoy's metric tags: "timeslice,start_s,end_s,metric,unit,stat,value", one row
// per statistic (avg, min, max, sum, p1..p99, std, count) of each distribution, one (avg) per
// aggregate.
std::string timeslices_csv(const std::vector<TimeSliceStats>& slices);

}  // namespace convoy::controller
