#include "controller/run/live_window.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace convoy::controller {

namespace {
constexpr int64_t kNsPerSecond = 1'000'000'000;
}  // namespace

int LiveHistogram::bucket_of(int64_t value_ns) {
  const auto v = static_cast<uint64_t>(std::max<int64_t>(value_ns, 1));
  const int msb = 63 - std::countl_zero(v);
  if (msb < kSubBits) return static_cast<int>(v);  // 1..7 ns: a bucket each
  const auto sub = static_cast<int>((v >> (msb - kSubBits)) & ((1u << kSubBits) - 1));
  return (msb << kSubBits) + sub;
}

double LiveHistogram::bucket_midpoint(int bucket) {
  const int msb = bucket >> kSubBits;
  if (msb < kSubBits) return bucket;
  const int sub = bucket & ((1 << kSubBits) - 1);
  const double step = std::ldexp(1.0, msb - kSubBits);  // the bucket's width
  return (static_cast<double>((1 << kSubBits) + sub) + 0.5) * step;
}

void LiveHistogram::add(int64_t value_ns) {
  ++counts_[static_cast<size_t>(bucket_of(value_ns))];
  ++count_;
}

void LiveHistogram::merge(const LiveHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
}

void LiveHistogram::clear() {
  if (count_ == 0) return;
  counts_.fill(0);
  count_ = 0;
}

std::optional<double> LiveHistogram::quantile_ns(double q) const {
  if (count_ == 0) return std::nullopt;
  const auto rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(q * static_cast<double>(count_) - 1e-9)), 1, count_);
  int64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return bucket_midpoint(static_cast<int>(i));
  }
  return bucket_midpoint(kBuckets - 1);
}

void LiveWindow::begin(int64_t origin_ns) {
  *this = LiveWindow{};
  origin_ns_ = origin_ns;
}

int64_t LiveWindow::second_of(int64_t t_ns) const {
  return std::max<int64_t>(0, t_ns - origin_ns_) / kNsPerSecond;
}

void LiveWindow::add(int64_t end_ns, bool ok, int64_t output_tokens, std::optional<int64_t> ttft_ns,
                     std::optional<double> itl_ns) {
  ++(ok ? ok_total_ : failed_total_);
  const int64_t s = second_of(end_ns);
  Second& b = ring_[static_cast<size_t>(s % kRingSeconds)];
  if (s < b.second) return;  // later seconds took its bucket: in the totals only
  if (s > b.second) {
    b.second = s;
    b.ok = b.failed = b.output_tokens = 0;
    b.ttft.clear();
    b.itl.clear();
  }
  if (!ok) {
    ++b.failed;
    return;
  }
  ++b.ok;
  b.output_tokens += output_tokens;
  if (ttft_ns) b.ttft.add(*ttft_ns);
  if (itl_ns) b.itl.add(static_cast<int64_t>(*itl_ns));
}

void LiveWindow::add_error(proto::ErrorKind kind, int64_t http_status) {
  if (kind == proto::ErrorKind::kHttpStatus && http_status > 0) {
    ErrorCount* free_slot = nullptr;
    for (ErrorCount& e : by_status_) {
      if (e.count > 0 && e.http_status == http_status) {
        ++e.count;
        return;
      }
      if (e.count == 0 && !free_slot) free_slot = &e;
    }
    if (free_slot) {
      *free_slot = ErrorCount{kind, http_status, 1};
      return;
    }
  }
  const auto i = static_cast<size_t>(kind);
  if (i < by_kind_.size()) ++by_kind_[i];
}

WindowStats LiveWindow::stats(int64_t now_ns) const {
  WindowStats w;
  const int64_t now_s = second_of(now_ns);
  const int64_t first_s = std::max<int64_t>(0, now_s - kWindowSeconds + 1);
  w.seconds = static_cast<double>(now_ns - (origin_ns_ + first_s * kNsPerSecond)) / 1e9;
  LiveHistogram ttft, itl;
  int64_t tokens = 0;
  for (const Second& b : ring_) {
    if (b.second < first_s || b.second > now_s) continue;
    w.ok += b.ok;
    w.failed += b.failed;
    tokens += b.output_tokens;
    ttft.merge(b.ttft);
    itl.merge(b.itl);
  }
  // A window under a second (the measure just began) counts as one: not 1000 req/s from one
  // request in the first millisecond.
  const double rate_seconds = std::max(w.seconds, 1.0);
  w.requests_per_s = static_cast<double>(w.ok + w.failed) / rate_seconds;
  w.output_tokens_per_s = static_cast<double>(tokens) / rate_seconds;
  auto ms = [](std::optional<double> ns) -> std::optional<double> {
    if (!ns) return std::nullopt;
    return *ns / 1e6;
  };
  w.ttft_p50_ms = ms(ttft.quantile_ns(0.50));
  w.ttft_p99_ms = ms(ttft.quantile_ns(0.99));
  w.itl_p50_ms = ms(itl.quantile_ns(0.50));
  w.itl_p99_ms = ms(itl.quantile_ns(0.99));
  return w;
}

std::array<ErrorCount, LiveWindow::kTopErrors> LiveWindow::top_errors() const {
  std::array<ErrorCount, kTopErrors> top{};
  auto offer = [&top](const ErrorCount& e) {
    if (e.count <= top.back().count) return;
    top.back() = e;
    for (size_t i = top.size() - 1; i > 0 && top[i].count > top[i - 1].count; --i) {
      std::swap(top[i], top[i - 1]);
    }
  };
  for (size_t i = 1; i < by_kind_.size(); ++i) {
    offer(ErrorCount{static_cast<proto::ErrorKind>(i), 0, by_kind_[i]});
  }
  for (const ErrorCount& e : by_status_) offer(e);
  return top;
}

std::string error_label(const ErrorCount& e) {
  if (e.kind == proto::ErrorKind::kHttpStatus && e.http_status > 0) {
    return "http " + std::to_string(e.http_status);
  }
  return std::string(proto::to_string(e.kind));
}

}  // namespace convoy::controller
