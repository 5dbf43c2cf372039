// The live view's numbers over the last few seconds: a ring of per-second buckets (requests ok
// and failed, output tokens, TTFT and ITL in small fixed histograms) and the run's totals by
// error kind. Adding a record is O(1) and allocates nothing: the record path is hot, and the
// view only reads these a few times a second.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "proto/messages.hpp"

namespace convoy::controller {

// A latency histogram of fixed size: 8 buckets per power of two of nanoseconds (a value is
// reported as its bucket's midpoint, within 6.25% of the true value), 1 ns to 2^63 ns.
class LiveHistogram {
 public:
  static constexpr int kSubBits = 3;  // 2^3 buckets per power of two
  static constexpr int kBuckets = 64 << kSubBits;

  void add(int64_t value_ns);
  void merge(const LiveHistogram& other);
  void clear();
  int64_t count() const { return count_; }
  // The nearest-rank quantile (q in (0, 1]) as its bucket's midpoint; nullopt when empty.
  std::optional<double> quantile_ns(double q) const;

  static int bucket_of(int64_t value_ns);
  static double bucket_midpoint(int bucket);

 private:
  std::array<uint32_t, kBuckets> counts_{};
  int64_t count_ = 0;  // sum of counts_
};

// What the view shows of the last few seconds.
struct WindowStats {
  double seconds = 0;  // the window's length (shorter than kWindowSeconds at the start)
  int64_t ok = 0;      // requests that ended without error in the window
  int64_t failed = 0;
  double requests_per_s = 0;       // ended requests (ok and failed) per second
  double output_tokens_per_s = 0;  // output tokens of the ok requests per second
  std::optional<double> ttft_p50_ms, ttft_p99_ms;
  std::optional<double> itl_p50_ms, itl_p99_ms;
};

// One error kind (an HTTP status apart) and how many measured requests ended with it.
struct ErrorCount {
  proto::ErrorKind kind = proto::ErrorKind::kNone;
  int64_t http_status = 0;  // for kHttpStatus; 0 otherwise
  int64_t count = 0;
};

class LiveWindow {
 public:
  static constexpr int kRingSeconds = 8;    // buckets kept; a record older than this is late
  static constexpr int kWindowSeconds = 5;  // what the rates and quantiles cover
  static constexpr size_t kTopErrors = 3;

  // The clock's origin of second 0 (the measure's start); clears everything.
  void begin(int64_t origin_ns);
  // A request that ended at `end_ns` (the controller's clock). A record too old for the ring
  // still counts in the totals.
  void add(int64_t end_ns, bool ok, int64_t output_tokens, std::optional<int64_t> ttft_ns,
           std::optional<double> itl_ns);
  void add_error(proto::ErrorKind kind, int64_t http_status);

  // The last kWindowSeconds up to `now_ns` (the current second included).
  WindowStats stats(int64_t now_ns) const;
  int64_t ok_total() const { return ok_total_; }
  int64_t failed_total() const { return failed_total_; }
  // The most frequent error kinds, most first (count 0: none).
  std::array<ErrorCount, kTopErrors> top_errors() const;

 private:
  struct Second {
    int64_t second = -1;  // which second since the origin this bucket holds; -1: none yet
    int64_t ok = 0;
    int64_t failed = 0;
    int64_t output_tokens = 0;
    LiveHistogram ttft;
    LiveHistogram itl;
  };
  int64_t second_of(int64_t t_ns) const;

  int64_t origin_ns_ = 0;
  std::array<Second, kRingSeconds> ring_{};
  int64_t ok_total_ = 0;
  int64_t failed_total_ = 0;
  // Counts by ErrorKind; HTTP statuses apart in a few slots (the rest counted under the kind).
  static constexpr size_t kKinds = static_cast<size_t>(proto::ErrorKind::kResponseTooLarge) + 1;
  static constexpr size_t kStatusSlots = 6;
  std::array<int64_t, kKinds> by_kind_{};
  std::array<ErrorCount, kStatusSlots> by_status_{};  // count 0: a free slot
};

// Short names for the view ("http 503", "timeout (first byte)").
std::string error_label(const ErrorCount& e);

}  // namespace convoy::controller
