#include "mock/stats.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <sstream>

namespace convoy::mock {

namespace {

constexpr std::array<double, 14> kTtftBucketsS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                  0.25,  0.5,    1.0,   2.5,  5.0,   10.0, 30.0};
constexpr std::array<const char*, 4> kFaultNames = {"error", "reset", "malformed", "stall"};
constexpr std::array<const char*, 6> kAffinityNames = {
    "hits", "misses", "invalidated", "soft_moves", "rejected_id_too_long", "unbound_table_full"};

// The emitted-ITL histogram: 5 us buckets up to 250 ms (p50 and p99 to 5 us, 400 KB).
constexpr double kEmittedItlBucketUs = 5.0;
constexpr size_t kEmittedItlBuckets = 50'000;

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void key(Writer& w, const char* k) { w.Key(k); }
void str(Writer& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
double ratio(int64_t num, int64_t den) {
  return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
}

void write_worker(Writer& w, const WorkerView& v) {
  w.StartObject();
  key(w, "id");
  w.Int(v.id);
  key(w, "instance_id");
  w.Uint64(v.instance_id);
  key(w, "dp_rank");
  w.Int(v.dp_rank);
  key(w, "up");
  w.Bool(v.up);
  key(w, "active");
  w.Int(v.active);
  key(w, "queued");
  w.Int64(v.queued);
  key(w, "requests");
  w.Int64(v.requests);
  key(w, "cached_blocks");
  w.Int64(v.cached_blocks);
  key(w, "capacity_blocks");
  w.Int64(v.capacity_blocks);
  key(w, "evicted_blocks");
  w.Int64(v.evicted_blocks);
  key(w, "prefill_blocks");
  w.Int64(v.prefill_blocks);
  key(w, "decode_blocks");
  w.Int64(v.decode_blocks);
  w.EndObject();
}

// Per turn index: admissions, TTFT and prefix-cache hits ("ttft_by_turn").
template <typename TurnRows>
void write_turns(Writer& w, const TurnRows& turns) {
  w.StartArray();
  for (size_t i = 0; i < turns.size(); ++i) {
    const auto& row = turns[i];
    w.StartObject();
    key(w, "turn");
    w.Int64(static_cast<int64_t>(i));
    key(w, "requests");
    w.Int64(row.admitted);
    key(w, "ttft_count");
    w.Int64(row.ttft_count);
    key(w, "ttft_mean_ms");
    w.Double(row.ttft_count > 0 ? row.ttft_sum_ms / static_cast<double>(row.ttft_count) : 0.0);
    key(w, "ttft_min_ms");
    w.Double(row.ttft_min_ms);
    key(w, "ttft_max_ms");
    w.Double(row.ttft_max_ms);
    key(w, "prompt_tokens");
    w.Int64(row.prompt_tokens);
    key(w, "cached_tokens");
    w.Int64(row.cached_tokens);
    key(w, "cache_hit_rate");
    w.Double(ratio(row.cached_tokens, row.prompt_tokens));
    w.EndObject();
  }
  w.EndArray();
}

// The tracked sessions by id: requests, worker switches and the workers visited ("by_id").
template <typename SessionRows>
void write_sessions(Writer& w, const SessionRows& sessions) {
  w.StartObject();
  for (const auto& row : sessions) {
    str(w, row.id);
    w.StartObject();
    key(w, "requests");
    w.Int64(row.requests);
    key(w, "switches");
    w.Int64(row.switches);
    key(w, "workers");
    w.StartArray();
    for (const int worker : row.workers) w.Int(worker);
    w.EndArray();
    key(w, "frontends");
    w.StartArray();
    for (const int frontend : row.frontends) w.Int(frontend);
    w.EndArray();
    if (!row.parent.empty()) {
      key(w, "parent");
      str(w, row.parent);
    }
    key(w, "finals");
    w.Int64(row.finals);
    w.EndObject();
  }
  w.EndObject();
}

}  // namespace

void Stats::count_response(Endpoint endpoint, int status) {
  ++responses_[{static_cast<int>(endpoint), status}];
}

Stats::Stats(size_t session_limit) : session_limit_(std::max<size_t>(session_limit, 1)) {}

int64_t Stats::observe_session(const std::string& key_name, int worker, int frontend,
                               const std::string& parent, bool session_final) {
  auto found = session_index_.find(std::string_view(key_name));
  if (found == session_index_.end()) {
    if (sessions_.size() >= session_limit_) {
      // Forget the least recently seen session and reuse its list node (and the id's buffer:
      // uuids are all one length), so a long run churns no row memory.
      session_index_.erase(std::string_view(sessions_.back().id));
      sessions_.splice(sessions_.begin(), sessions_, std::prev(sessions_.end()));
      SessionRow& row = sessions_.front();
      row.id.assign(key_name);
      row.requests = 0;
      row.switches = 0;
      row.last_worker = -1;
      row.workers.clear();
      row.parent.clear();
      row.finals = 0;
      row.frontends.clear();
      ++sessions_evicted_;
    } else {
      sessions_.push_front(SessionRow{key_name, 0, 0, -1, {}, {}, 0, {}});
    }
    ++sessions_seen_;
    found = session_index_.emplace(std::string_view(sessions_.front().id), sessions_.begin()).first;
  } else if (found->second != sessions_.begin()) {
    sessions_.splice(sessions_.begin(), sessions_, found->second);
  }
  SessionRow& row = *found->second;
  const int64_t turn = row.requests++;
  if (row.last_worker >= 0 && row.last_worker != worker) {
    if (row.switches++ == 0) ++sessions_with_switches_;
    ++worker_switches_;
  }
  row.last_worker = worker;
  if (std::find(row.workers.begin(), row.workers.end(), worker) == row.workers.end()) {
    row.workers.push_back(worker);
  }
  if (std::find(row.frontends.begin(), row.frontends.end(), frontend) == row.frontends.end()) {
    row.frontends.push_back(frontend);
  }
  if (!parent.empty()) row.parent = parent;
  if (session_final) ++row.finals;
  return turn;
}

void Stats::record_session_headers(bool has_parent, std::optional<bool> session_final) {
  if (has_parent) ++with_parent_;
  if (session_final) ++(*session_final ? session_final_true_ : session_final_false_);
}

void Stats::count_affinity(AffinityEvent event) { ++affinity_[static_cast<int>(event)]; }

void Stats::record_admission(int64_t turn_index, int64_t prompt_tokens, int64_t cached_tokens) {
  const auto i = static_cast<size_t>(std::clamp<int64_t>(turn_index, 0, kMaxTurnIndex));
  if (turns_.size() <= i) turns_.resize(i + 1);
  auto& row = turns_[i];
  ++row.admitted;
  row.prompt_tokens += prompt_tokens;
  row.cached_tokens += cached_tokens;
  prompt_tokens_ += prompt_tokens;
  cached_tokens_ += cached_tokens;
}

void Stats::record_ttft(int64_t turn_index, double ttft_ms) {
  const auto i = static_cast<size_t>(std::clamp<int64_t>(turn_index, 0, kMaxTurnIndex));
  if (turns_.size() <= i) turns_.resize(i + 1);
  auto& row = turns_[i];
  row.ttft_min_ms = row.ttft_count == 0 ? ttft_ms : std::min(row.ttft_min_ms, ttft_ms);
  row.ttft_max_ms = row.ttft_count == 0 ? ttft_ms : std::max(row.ttft_max_ms, ttft_ms);
  ++row.ttft_count;
  row.ttft_sum_ms += ttft_ms;

  if (ttft_buckets_.empty()) ttft_buckets_.assign(kTtftBucketsS.size(), 0);
  const double s = ttft_ms / 1000.0;
  for (size_t b = 0; b < kTtftBucketsS.size(); ++b) {
    if (s <= kTtftBucketsS[b]) ++ttft_buckets_[b];
  }
  ttft_sum_s_ += s;
  ++ttft_count_;
}

void Stats::record_completion(int64_t completion_tokens, double lateness_ms,
                              double emitted_itl_ms) {
  completion_tokens_ += completion_tokens;
  ++completions_;
  lateness_sum_ms_ += lateness_ms;
  lateness_max_ms_ = std::max(lateness_max_ms_, lateness_ms);
  if (emitted_itl_ms < 0) return;
  if (emitted_itl_buckets_.empty()) emitted_itl_buckets_.assign(kEmittedItlBuckets, 0);
  const auto bucket = static_cast<size_t>(emitted_itl_ms * 1000.0 / kEmittedItlBucketUs);
  ++emitted_itl_buckets_[std::min(bucket, kEmittedItlBuckets - 1)];
  emitted_itl_sum_ms_ += emitted_itl_ms;
  ++emitted_itl_count_;
}

namespace {

// The q-quantile of the emitted-ITL histogram (a bucket's middle), in ms.
double emitted_itl_quantile(const std::vector<int64_t>& buckets, int64_t count, double q) {
  if (count <= 0) return 0.0;
  const auto rank = static_cast<int64_t>(q * static_cast<double>(count - 1)) + 1;
  int64_t seen = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    seen += buckets[b];
    if (seen >= rank) return (static_cast<double>(b) + 0.5) * kEmittedItlBucketUs / 1000.0;
  }
  return static_cast<double>(buckets.size()) * kEmittedItlBucketUs / 1000.0;
}

}  // namespace

void Stats::count_fault(FaultKind kind) { ++faults_[static_cast<int>(kind)]; }

void Stats::clear() {
  const size_t limit = session_limit_;
  *this = Stats(limit);
}

template <class W>
void Stats::write_session_sections(W& w) const {
  key(w, "sessions");
  w.StartObject();
  key(w, "count");
  w.Int64(sessions_seen_);
  key(w, "tracked");
  w.Int64(static_cast<int64_t>(sessions_.size()));
  key(w, "limit");
  w.Int64(static_cast<int64_t>(session_limit_));
  key(w, "evicted");
  w.Int64(sessions_evicted_);
  key(w, "worker_switches");
  w.Int64(worker_switches_);
  key(w, "sessions_with_switches");
  w.Int64(sessions_with_switches_);
  key(w, "by_id");
  write_sessions(w, sessions_);
  w.EndObject();

  // Header contract: what the session headers said and what the binding tables did.
  key(w, "session_headers");
  w.StartObject();
  key(w, "with_parent");
  w.Int64(with_parent_);
  key(w, "session_final");
  w.Int64(session_final_true_);
  key(w, "session_final_false");
  w.Int64(session_final_false_);
  w.EndObject();
  key(w, "affinity");
  w.StartObject();
  for (size_t i = 0; i < kAffinityNames.size(); ++i) {
    key(w, kAffinityNames[i]);
    w.Int64(affinity_[i]);
  }
  w.EndObject();
}

std::string Stats::json(const std::vector<WorkerView>& workers, int64_t live_pins) const {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  int64_t total = 0;
  for (const auto& [k, n] : responses_) total += n;
  key(w, "requests");
  w.Int64(total);
  key(w, "responses_by_status");
  w.StartObject();
  std::map<int, int64_t> by_status;
  for (const auto& [k, n] : responses_) by_status[k.second] += n;
  for (const auto& [status, n] : by_status) {
    str(w, std::to_string(status));
    w.Int64(n);
  }
  w.EndObject();
  key(w, "prompt_tokens");
  w.Int64(prompt_tokens_);
  key(w, "cached_tokens");
  w.Int64(cached_tokens_);
  key(w, "completion_tokens");
  w.Int64(completion_tokens_);
  key(w, "cache_hit_rate");
  w.Double(ratio(cached_tokens_, prompt_tokens_));

  // How far behind schedule tokens went out: the mock's own health under load.
  key(w, "token_lateness_ms");
  w.StartObject();
  key(w, "mean_of_request_max");
  w.Double(completions_ > 0 ? lateness_sum_ms_ / static_cast<double>(completions_) : 0.0);
  key(w, "max");
  w.Double(lateness_max_ms_);
  w.EndObject();
  // Streamed requests' ITL as the mock emitted it (what a client can be held to under load).
  key(w, "emitted_itl_ms");
  w.StartObject();
  key(w, "count");
  w.Int64(emitted_itl_count_);
  key(w, "mean");
  w.Double(emitted_itl_count_ > 0 ? emitted_itl_sum_ms_ / static_cast<double>(emitted_itl_count_)
                                  : 0.0);
  key(w, "p50");
  w.Double(emitted_itl_quantile(emitted_itl_buckets_, emitted_itl_count_, 0.5));
  key(w, "p99");
  w.Double(emitted_itl_quantile(emitted_itl_buckets_, emitted_itl_count_, 0.99));
  w.EndObject();

  key(w, "ttft_by_turn");
  write_turns(w, turns_);

  write_session_sections(w);

  key(w, "live_pins");
  w.Int64(live_pins);
  key(w, "faults");
  w.StartObject();
  for (size_t i = 0; i < kFaultNames.size(); ++i) {
    key(w, kFaultNames[i]);
    w.Int64(faults_[i]);
  }
  w.EndObject();

  key(w, "workers");
  w.StartArray();
  for (const auto& v : workers) write_worker(w, v);
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string Stats::prometheus(const std::vector<WorkerView>& workers,
                              const std::string& model) const {
  std::ostringstream os;
  const std::string m = "model=\"" + model + "\"";
  os << "# HELP convoy_mock_requests_total Responses by endpoint and HTTP status.\n"
     << "# TYPE convoy_mock_requests_total counter\n";
  for (const auto& [k, n] : responses_) {
    os << "convoy_mock_requests_total{" << m << ",endpoint=\""
       << to_string(static_cast<Endpoint>(k.first)) << "\",status=\"" << k.second << "\"} " << n
       << '\n';
  }
  os << "# HELP convoy_mock_time_to_first_token_seconds Time from arrival to first token.\n"
     << "# TYPE convoy_mock_time_to_first_token_seconds histogram\n";
  for (size_t b = 0; b < kTtftBucketsS.size(); ++b) {
    os << "convoy_mock_time_to_first_token_seconds_bucket{" << m << ",le=\"" << kTtftBucketsS[b]
       << "\"} " << (ttft_buckets_.empty() ? 0 : ttft_buckets_[b]) << '\n';
  }
  os << "convoy_mock_time_to_first_token_seconds_bucket{" << m << ",le=\"+Inf\"} " << ttft_count_
     << '\n'
     << "convoy_mock_time_to_first_token_seconds_sum{" << m << "} " << ttft_sum_s_ << '\n'
     << "convoy_mock_time_to_first_token_seconds_count{" << m << "} " << ttft_count_ << '\n';
  os << "# HELP convoy_mock_prompt_tokens_total Prompt tokens admitted.\n"
     << "# TYPE convoy_mock_prompt_tokens_total counter\n"
     << "convoy_mock_prompt_tokens_total{" << m << "} " << prompt_tokens_ << '\n'
     << "# HELP convoy_mock_cached_tokens_total Prompt tokens served from the prefix cache.\n"
     << "# TYPE convoy_mock_cached_tokens_total counter\n"
     << "convoy_mock_cached_tokens_total{" << m << "} " << cached_tokens_ << '\n'
     << "# HELP convoy_mock_completion_tokens_total Output tokens of completed requests.\n"
     << "# TYPE convoy_mock_completion_tokens_total counter\n"
     << "convoy_mock_completion_tokens_total{" << m << "} " << completion_tokens_ << '\n';
  os << "# HELP convoy_mock_worker_active_sequences Admitted sequences per worker.\n"
     << "# TYPE convoy_mock_worker_active_sequences gauge\n";
  for (const auto& v : workers) {
    os << "convoy_mock_worker_active_sequences{worker=\"" << v.id << "\"} " << v.active << '\n';
  }
  os << "# HELP convoy_mock_worker_queued_requests Requests waiting for a slot per worker.\n"
     << "# TYPE convoy_mock_worker_queued_requests gauge\n";
  for (const auto& v : workers) {
    os << "convoy_mock_worker_queued_requests{worker=\"" << v.id << "\"} " << v.queued << '\n';
  }
  os << "# HELP convoy_mock_worker_kv_blocks Blocks in the worker's prefix cache.\n"
     << "# TYPE convoy_mock_worker_kv_blocks gauge\n";
  for (const auto& v : workers) {
    os << "convoy_mock_worker_kv_blocks{worker=\"" << v.id << "\"} " << v.cached_blocks << '\n';
  }
  os << "# HELP convoy_mock_worker_up Whether the worker takes requests (1) or is down (0).\n"
     << "# TYPE convoy_mock_worker_up gauge\n";
  for (const auto& v : workers) {
    os << "convoy_mock_worker_up{worker=\"" << v.id << "\"} " << (v.up ? 1 : 0) << '\n';
  }
  os << "# HELP convoy_mock_faults_total Injected faults by kind.\n"
     << "# TYPE convoy_mock_faults_total counter\n";
  for (size_t i = 0; i < kFaultNames.size(); ++i) {
    os << "convoy_mock_faults_total{kind=\"" << kFaultNames[i] << "\"} " << faults_[i] << '\n';
  }
  return os.str();
}

}  // namespace convoy::mock
