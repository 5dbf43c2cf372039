#include "controller/report/client_timeline.hpp"

#include <algorithm>
#include <cmath>

#include "common/histogram.hpp"

namespace convoy::controller {

size_t ClientTimeline::bin_of(int64_t ttft_ns) {
  if (ttft_ns < (int64_t{1} << kLowestOctave)) return 0;
  const double octaves = std::log2(static_cast<double>(ttft_ns)) - kLowestOctave;
  const auto bin = static_cast<size_t>(octaves * kBinsPerOctave);
  return std::min(bin, kBins - 1);
}

size_t ClientTimeline::index_of(int64_t offset_ns) {
  // Halving the resolution: the covering counts are folded into busy time first.
  while (!buckets_.fits(offset_ns)) {
    fold_cover();
    buckets_.coarsen();
  }
  return buckets_.index_of(offset_ns);
}

void ClientTimeline::fold_cover() {
  int64_t covering = 0;
  for (Bucket& b : buckets_.points()) {
    covering += b.cover_diff;
    b.busy_ns += covering * buckets_.width();
    b.cover_diff = 0;
  }
}

void ClientTimeline::Bucket::merge(const Bucket& from) {
  for (size_t k = 0; k < kBins; ++k) ttft[k] += from.ttft[k];
  ttft_count += from.ttft_count;
  ttft_min_ns = std::min(ttft_min_ns, from.ttft_min_ns);
  ttft_max_ns = std::max(ttft_max_ns, from.ttft_max_ns);
  busy_ns += from.busy_ns;
}

void ClientTimeline::add_ttft(int64_t origin_ns, int64_t at_ns, int64_t ttft_ns) {
  Bucket& b = buckets_[index_of(at_ns - origin_ns)];
  ++b.ttft[bin_of(ttft_ns)];
  ++b.ttft_count;
  b.ttft_min_ns = std::min(b.ttft_min_ns, ttft_ns);
  b.ttft_max_ns = std::max(b.ttft_max_ns, ttft_ns);
}

void ClientTimeline::add_in_flight(int64_t origin_ns, int64_t sent_ns, int64_t end_ns) {
  const int64_t from = std::max<int64_t>(0, sent_ns - origin_ns);
  const int64_t to = std::max<int64_t>(0, end_ns - origin_ns);
  if (to <= from) return;
  const size_t last = index_of(to);  // first: it may coarsen
  const size_t first = index_of(from);
  const int64_t width_ns = buckets_.width();
  const int64_t first_start = buckets_.start_of(first);
  const int64_t last_start = buckets_.start_of(last);
  if (first == last) {
    buckets_[first].busy_ns += to - from;
    return;
  }
  buckets_[first].busy_ns += first_start + width_ns - from;
  buckets_[last].busy_ns += to - last_start;
  if (last > first + 1) {
    ++buckets_[first + 1].cover_diff;
    --buckets_[last].cover_diff;
  }
}

double ClientTimeline::percentile_ms(const Bucket& b, double q) {
  // The Histogram family's nearest rank, so a p99 here means what it means in the summary.
  const int64_t rank = Histogram::nearest_rank(q * 100, b.ttft_count);
  int64_t seen = 0;
  size_t bin = 0;
  for (; bin < kBins; ++bin) {
    seen += b.ttft[bin];
    if (seen >= rank) break;
  }
  const double exponent =
      kLowestOctave + (static_cast<double>(std::min(bin, kBins - 1)) + 0.5) / kBinsPerOctave;
  const double middle_ns = std::exp2(exponent);
  const double clamped =
      std::clamp(middle_ns, static_cast<double>(b.ttft_min_ns), static_cast<double>(b.ttft_max_ns));
  return clamped / 1e6;
}

std::vector<ClientTimePoint> ClientTimeline::points() const {
  std::vector<ClientTimePoint> out;
  out.reserve(buckets_.size());
  int64_t covering = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    covering += b.cover_diff;
    ClientTimePoint p;
    p.start_s = static_cast<double>(i) * bucket_s();
    p.ttft_count = b.ttft_count;
    if (b.ttft_count > 0) {
      p.ttft_p50_ms = percentile_ms(b, 0.50);
      p.ttft_p99_ms = percentile_ms(b, 0.99);
    }
    const int64_t width_ns = buckets_.width();
    p.in_flight =
        static_cast<double>(b.busy_ns + covering * width_ns) / static_cast<double>(width_ns);
    out.push_back(p);
  }
  return out;
}

}  // namespace convoy::controller
