// What the mock observed, for GET /mock/stats and GET /metrics. Not thread-safe on its own:
// the Engine holds its lock around every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mock/api_request.hpp"

namespace convoy::mock {

// A worker as the statistics show it.
struct WorkerView {
  int id = 0;
  uint64_t instance_id = 0;  // as nvext.worker_id reports it
  int dp_rank = 0;
  bool up = true;
  int active = 0;
  int64_t queued = 0;
  int64_t cached_blocks = 0;
  int64_t capacity_blocks = 0;
  int64_t evicted_blocks = 0;
  int64_t requests = 0;
  int64_t prefill_blocks = 0;
  int64_t decode_blocks = 0;
};

enum class FaultKind { kError, kReset, kMalformed, kStall };

// Header-contract affinity outcomes (GET /mock/stats "affinity").
enum class AffinityEvent {
  kHit,          // a live binding routed the request
  kMiss,         // no binding: routed fresh, then bound
  kInvalidated,  // hard: the bound worker was down; binding dropped, request retried elsewhere
  kSoftMove,     // soft: the binding was passed over (worker down or saturated) and moved
  kIdTooLong,    // 400 "Invalid request": id over 256 bytes
  kTableFull,  // routed without affinity: the frontend's table had --affinity-max-entries bindings
};

class Stats {
 public:
  static constexpr int64_t kMaxTurnIndex = 63;  // later turns share the last row
  // Sessions kept in `sessions.by_id` (--stats-sessions): the least recently seen beyond it are
  // forgotten, so a long run's memory stays flat. The totals keep counting every session.
  static constexpr size_t kDefaultSessionLimit = 65'536;

  explicit Stats(size_t session_limit = kDefaultSessionLimit);
  Stats(const Stats&) = delete;  // the index views ids held in the list
  Stats& operator=(const Stats&) = delete;
  Stats(Stats&&) = default;
  Stats& operator=(Stats&&) = default;

  void count_response(Endpoint endpoint, int status);
  // Per-session bookkeeping; returns the request's turn index within the session. `parent`:
  // the request's parent session ("" = none); `session_final`: X-Dynamo-Session-Final was true.
  int64_t observe_session(const std::string& key, int worker, int frontend = 0,
                          const std::string& parent = {}, bool session_final = false);
  // Every routed request's session headers (header contract), with or without a stats key.
  void record_session_headers(bool has_parent, std::optional<bool> session_final);
  void count_affinity(AffinityEvent event);
  void record_admission(int64_t turn_index, int64_t prompt_tokens, int64_t cached_tokens);
  void record_ttft(int64_t turn_index, double ttft_ms);
  // `emitted_itl_ms`: the request's streamed ITL as the mock actually emitted it (last token's
  // emission minus the first's, over tokens - 1); negative when not streamed or one token.
  void record_completion(int64_t completion_tokens, double lateness_ms, double emitted_itl_ms = -1);
  void count_fault(FaultKind kind);
  void clear();

  // `live_pins`: session pins held right now (not swept first, so tests can watch the reaper).
  std::string json(const std::vector<WorkerView>& workers, int64_t live_pins) const;
  std::string prometheus(const std::vector<WorkerView>& workers, const std::string& model) const;

 private:
  // json()'s "sessions", "session_headers" and "affinity" objects (W: the rapidjson writer).
  template <class W>
  void write_session_sections(W& w) const;
  struct TurnRow {
    int64_t admitted = 0;
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;
    int64_t ttft_count = 0;
    double ttft_sum_ms = 0;
    double ttft_min_ms = 0;
    double ttft_max_ms = 0;
  };
  struct SessionRow {
    std::string id;
    int64_t requests = 0;
    int64_t switches = 0;
    int last_worker = -1;
    std::vector<int> workers;    // in order of first visit
    std::string parent;          // the latest X-Dynamo-Parent-Session-ID seen ("" = none)
    int64_t finals = 0;          // requests with X-Dynamo-Session-Final: true
    std::vector<int> frontends;  // in order of first visit
  };
  using SessionList = std::list<SessionRow>;  // front = most recently seen

  size_t session_limit_;
  std::map<std::pair<int, int>, int64_t> responses_;  // (endpoint, status) -> count
  std::vector<TurnRow> turns_;
  SessionList sessions_;
  // Keys view the ids inside `sessions_` (list nodes never move).
  std::unordered_map<std::string_view, SessionList::iterator> session_index_;
  int64_t sessions_seen_ = 0;  // every session observed (one evicted and seen again counts twice)
  int64_t sessions_evicted_ = 0;
  int64_t worker_switches_ = 0;  // over every session, tracked or evicted
  int64_t sessions_with_switches_ = 0;
  int64_t prompt_tokens_ = 0;
  int64_t cached_tokens_ = 0;
  int64_t completion_tokens_ = 0;
  int64_t completions_ = 0;
  double lateness_sum_ms_ = 0;  // per request: its worst token lateness
  double lateness_max_ms_ = 0;
  // Per-request emitted ITL, a histogram of kEmittedItlBucketUs-wide buckets (the last one
  // holds everything beyond); empty until the first streamed request completes.
  std::vector<int64_t> emitted_itl_buckets_;
  double emitted_itl_sum_ms_ = 0;
  int64_t emitted_itl_count_ = 0;
  std::vector<int64_t> ttft_buckets_;  // Prometheus cumulative counts, see kTtftBucketsS
  double ttft_sum_s_ = 0;
  int64_t ttft_count_ = 0;
  int64_t faults_[4] = {0, 0, 0, 0};
  int64_t session_final_true_ = 0;
  int64_t session_final_false_ = 0;
  int64_t with_parent_ = 0;
  int64_t affinity_[6] = {0, 0, 0, 0, 0, 0};
};

}  // namespace convoy::mock
