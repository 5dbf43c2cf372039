// The client's side of report.html's Server section: per time bucket, the
// TTFT p50 and p99 of the requests whose first token arrived in it, and the time-averaged
// number of measured requests in flight, on the over-time series' origin (the measure start,
// which is also the origin of the server telemetry's timelines). Bounded: at most kMaxPoints
// buckets (their width doubles when a run outlasts them), each of a fixed size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "common/bounded_series.hpp"

namespace convoy::controller {

// One bucket [start_s, start_s + width) of ClientTimeline::points().
struct ClientTimePoint {
  double start_s = 0;      // since the origin
  int64_t ttft_count = 0;  // requests whose first token arrived in the bucket
  std::optional<double> ttft_p50_ms;
  std::optional<double> ttft_p99_ms;
  double in_flight = 0;  // measured requests in flight, averaged over the bucket's time
};

class ClientTimeline {
 public:
  static constexpr size_t kMaxPoints = 1024;
  // TTFT bins: 8 per power of two (9% wide) from 2^13 ns (8 us) to 2^41 ns (37 min); values
  // outside fall in the first or last bin. A percentile is its bin's geometric middle, clamped
  // to the bucket's exact min and max, so within ~4.5% of the exact value. Not the Histogram
  // family's log-linear buckets (0.1%): a point here must cost the same few hundred bytes
  // whatever TTFTs arrive (1024 points), where a Histogram grows to the spread it sees (a
  // counter per 0.1% step between its min and max), and a plotted p50/p99 needs no finer step.
  static constexpr int kBinsPerOctave = 8;
  static constexpr int kLowestOctave = 13;
  static constexpr int kOctaves = 28;
  static constexpr size_t kBins = size_t{kBinsPerOctave} * kOctaves;

  // A first token at `at_ns` (controller clock) after `ttft_ns`.
  void add_ttft(int64_t origin_ns, int64_t at_ns, int64_t ttft_ns);
  // A measured request in flight over [sent_ns, end_ns).
  void add_in_flight(int64_t origin_ns, int64_t sent_ns, int64_t end_ns);

  std::vector<ClientTimePoint> points() const;
  double bucket_s() const { return static_cast<double>(buckets_.width()) / 1e9; }
  size_t memory_bytes() const { return buckets_.memory_bytes(); }

  static size_t bin_of(int64_t ttft_ns);

 private:
  struct Bucket {
    std::array<uint32_t, kBins> ttft{};
    int64_t ttft_count = 0;
    int64_t ttft_min_ns = std::numeric_limits<int64_t>::max();
    int64_t ttft_max_ns = 0;
    // In flight: busy_ns is the time requests spent in the bucket, except for requests that
    // cover it whole, counted by a difference array (cover_diff) so a long request costs O(1).
    int64_t busy_ns = 0;
    int64_t cover_diff = 0;
    // Two neighbours become one; cover_diff must have been folded into busy_ns first
    // (fold_cover), since a bucket twice as wide is covered whole by fewer requests.
    void merge(const Bucket& other);
  };
  // The bucket index of an offset from the origin, coarsening until it fits; grows buckets_.
  size_t index_of(int64_t offset_ns);
  // Turns every covering count into busy time, so that buckets can merge.
  void fold_cover();
  static double percentile_ms(const Bucket& b, double q);

  // By time since the origin, width in ns (one second to start with).
  BoundedSeries<Bucket, MergeMember> buckets_{kMaxPoints, 1'000'000'000};
};

}  // namespace convoy::controller
