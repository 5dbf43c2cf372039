#include "controller/report/metrics.hpp"

#include "controller/report/class_stats.hpp"
#include "controller/report/server_timing.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/redact.hpp"
#include "controller/config/target_models.hpp"
#include "controller/report/summary_keys.hpp"
#include "controller/report/timeslice.hpp"

namespace convoy::controller {

namespace {

constexpr double kNsPerMs = 1e6;
constexpr double kPerUserScale = 1e3;  // output_token_throughput_per_user kept in milli-tokens/s
constexpr double kHitRateScale = 1e4;  // prefix_cache_hit_rate kept in 1e-4 %

// Indexed by MetricsAggregator::Metric.
constexpr MetricDef kDefs[] = {
    {summary_tag::kTimeToFirstToken, "Time to First Token", "ms", kNsPerMs},
    {summary_tag::kTimeToFirstTokenFirstTurn, "Time to First Token (first turn)", "ms", kNsPerMs},
    {summary_tag::kTimeToFirstTokenLaterTurns, "Time to First Token (later turns)", "ms", kNsPerMs},
    {summary_tag::kTimeToSecondToken, "Time to Second Token", "ms", kNsPerMs},
    {summary_tag::kInterTokenLatency, "Inter Token Latency", "ms", kNsPerMs},
    {summary_tag::kInterChunkLatency, "Inter Chunk Latency", "ms", kNsPerMs},
    {summary_tag::kRequestLatency, "Request Latency", "ms", kNsPerMs},
    {summary_tag::kCorrectedRequestLatency, "Corrected Request Latency", "ms", kNsPerMs},
    {summary_tag::kScheduleLag, "Schedule Lag", "ms", kNsPerMs},
    {summary_tag::kInputSequenceLength, "Input Sequence Length", "tokens", 1},
    {summary_tag::kOutputSequenceLength, "Output Sequence Length", "tokens", 1},
    {summary_tag::kOutputTokenThroughputPerUser, "Output Token Throughput Per User",
     "tokens/sec/user", kPerUserScale},
    {summary_tag::kCachedTokens, "Cached Tokens", "tokens", 1},
    {summary_tag::kPrefixCacheHitRate, "Prefix Cache Hit Rate", "%", kHitRateScale},
    {summary_tag::kTimeToFirstTokenLead, "Time to First Token (lead)", "ms", kNsPerMs},
    {summary_tag::kTimeToFirstTokenSubagent, "Time to First Token (sub-agents)", "ms", kNsPerMs},
    // AIPerf's names (ai-dynamo/aiperf aiperf/metrics/types/time_to_first_output_token_metric.py,
    // reasoning_token_count.py): first non-reasoning content - request start; reasoning tokens
    // of one request.
    {summary_tag::kTimeToFirstOutputToken, "Time to First Output Token", "ms", kNsPerMs},
    {summary_tag::kReasoningTokenCount, "Reasoning Token Count", "tokens", 1},
};
constexpr MetricDef kFamilyMakespan = {summary_tag::kFamilyMakespan, "Family Makespan", "ms",
                                       kNsPerMs};
// The run-level scalars (single_value), of the whole run and of each time slice.
constexpr MetricDef kAggregateDefs[] = {
    {summary_tag::kOutputTokenThroughput, "Output Token Throughput", "tokens/sec", 1},
    {summary_tag::kTotalTokenThroughput, "Total Token Throughput", "tokens/sec", 1},
    {summary_tag::kRequestThroughput, "Request Throughput", "requests/sec", 1},
    {summary_tag::kGoodput, "Goodput", "requests/sec", 1},
    {summary_tag::kGoodRequestCount, "Good Request Count", "requests", 1},
    {summary_tag::kRequestCount, "Request Count", "requests", 1},
    {summary_tag::kErrorRequestCount, "Error Request Count", "requests", 1},
    {summary_tag::kTotalInputTokens, "Total Input Tokens", "tokens", 1},
    {summary_tag::kTotalOutputTokens, "Total Output Tokens", "tokens", 1},
    {summary_tag::kTotalReasoningTokens, "Total Reasoning Tokens", "tokens", 1},
    {summary_tag::kBenchmarkDuration, "Benchmark Duration", "sec", 1},
};

const MetricDef* find_def(std::string_view tag, const MetricDef* begin, const MetricDef* end) {
  const MetricDef* it = std::find_if(begin, end, [&](const MetricDef& d) { return d.tag == tag; });
  return it == end ? nullptr : it;
}

// The order metrics appear in the summary: AIPerf's first, then convoy's own.
constexpr size_t kSummaryOrder[] = {0, 1, 2, 14, 15, 16, 3, 6, 4, 5, 11, 9, 10, 17, 12, 13, 8, 7};

// AIPerf's token totals (ai-dynamo/aiperf: aiperf/metrics/types/input_sequence_length_metric.py
// total_isl, output_token_count.py total_output_tokens, reasoning_token_count.py
// total_reasoning_tokens; src/aiperf/metrics/types/total_token_throughput.py). As there,
// total_output_tokens leaves reasoning tokens out, while output_sequence_length,
// output_token_throughput and total_token_throughput count them.
void add_token_totals(MetricsSnapshot& s, bool reasoned) {
  s.metrics.push_back(
      single_value(summary_tag::kTotalInputTokens, static_cast<double>(s.total_input_tokens)));
  s.metrics.push_back(
      single_value(summary_tag::kTotalOutputTokens,
                   static_cast<double>(s.total_output_tokens - s.total_reasoning_tokens)));
  if (reasoned) {
    s.metrics.push_back(single_value(summary_tag::kTotalReasoningTokens,
                                     static_cast<double>(s.total_reasoning_tokens)));
  }
}

// Plot bins over [min, max]: logarithmic when the range spans more than a decade and a half,
// linear otherwise. Each histogram bucket lands in the bin of its midpoint.
std::vector<Bin> bins_of(const Histogram& h, double scale, int bin_count) {
  std::vector<Bin> bins;
  if (h.empty()) return bins;
  const double lo = static_cast<double>(h.min());
  const double hi = static_cast<double>(h.max());
  if (!(hi > lo)) {
    bins.push_back({lo / scale, hi / scale, h.count()});
    return bins;
  }
  const bool log_scale = lo > 0 && hi / lo > 30;
  const double a = log_scale ? std::log(lo) : lo;
  const double b = log_scale ? std::log(hi) : hi;
  const double step = (b - a) / bin_count;
  for (int i = 0; i < bin_count; ++i) {
    const double low = a + step * i;
    const double high = i + 1 == bin_count ? b : low + step;
    bins.push_back({(log_scale ? std::exp(low) : low) / scale,
                    (log_scale ? std::exp(high) : high) / scale, 0});
  }
  h.for_each_bucket([&](int64_t low, int64_t high, int64_t count) {
    const double mid =
        std::clamp(static_cast<double>(low) / 2 + static_cast<double>(high) / 2, lo, hi);
    const double x = log_scale ? std::log(mid) : mid;
    const auto i = std::clamp(static_cast<int>((x - a) / step), 0, bin_count - 1);
    bins[static_cast<size_t>(i)].count += count;
  });
  return bins;
}

// The value a slo tag constrains, in the slo's unit (ms; tokens/sec for per-user throughput).
std::optional<double> slo_value(std::string_view tag, const RequestMetrics& m) {
  auto ms = [](const std::optional<int64_t>& ns) -> std::optional<double> {
    if (!ns) return std::nullopt;
    return static_cast<double>(*ns) / kNsPerMs;
  };
  if (tag == summary_tag::kTimeToFirstToken) return ms(m.ttft_ns);
  if (tag == summary_tag::kTimeToSecondToken) return ms(m.ttst_ns);
  if (tag == summary_tag::kRequestLatency) return ms(m.request_latency_ns);
  if (tag == summary_tag::kCorrectedRequestLatency) return ms(m.corrected_request_latency_ns);
  if (tag == summary_tag::kScheduleLag) return ms(m.schedule_lag_ns);
  if (tag == summary_tag::kInterTokenLatency) {
    if (!m.itl_ns) return std::nullopt;
    return *m.itl_ns / kNsPerMs;
  }
  if (tag == summary_tag::kOutputTokenThroughputPerUser) return m.output_tokens_per_s_per_user;
  return std::nullopt;
}

// target.urls as the report shows them: passwords redacted.
std::vector<std::string> redacted_urls(const std::vector<std::string>& urls) {
  std::vector<std::string> out;
  out.reserve(urls.size());
  for (const auto& u : urls) out.push_back(redact_url(u));
  return out;
}

}  // namespace

const MetricDef* metric_def(std::string_view tag) {
  if (const MetricDef* d = find_def(tag, std::begin(kDefs), std::end(kDefs))) return d;
  if (tag == kFamilyMakespan.tag) return &kFamilyMakespan;
  return find_def(tag, std::begin(kAggregateDefs), std::end(kAggregateDefs));
}

MetricStats single_value(std::string_view tag, double value) {
  const MetricDef* def = find_def(tag, std::begin(kAggregateDefs), std::end(kAggregateDefs));
  if (def == nullptr) throw std::logic_error("no aggregate metric " + std::string(tag));
  MetricStats s;
  s.tag = def->tag;
  s.header = def->header;
  s.unit = def->unit;
  s.avg = s.min = s.max = s.sum = value;
  s.count = 1;
  s.percentiles.fill(value);
  s.aggregate = true;
  return s;
}

RequestMetrics compute_request_metrics(const proto::Record& r) {
  RequestMetrics m;
  m.ok = r.error.kind == proto::ErrorKind::kNone;
  const bool sent = r.sent_ns > 0;
  // A non-streamed reply has no first token (the worker leaves it 0): no TTFT, TTST or ITL.
  if (sent && r.first_token_ns > 0) m.ttft_ns = r.first_token_ns - r.sent_ns;
  if (sent && r.first_output_token_ns > 0) m.ttfo_ns = r.first_output_token_ns - r.sent_ns;
  if (r.first_token_ns > 0 && r.second_token_ns > 0) {
    m.ttst_ns = r.second_token_ns - r.first_token_ns;
  }
  // AIPerf ends request latency at the last response carrying content; a non-streaming
  // response (or one without content chunks) ends at the end of the transfer.
  const int64_t last_ns = r.last_token_ns > 0 ? r.last_token_ns : r.end_ns;
  if (sent && last_ns > 0) m.request_latency_ns = last_ns - r.sent_ns;
  if (r.intended_ns > 0 && r.end_ns > 0) m.corrected_request_latency_ns = r.end_ns - r.intended_ns;
  if (r.intended_ns > 0 && sent) m.schedule_lag_ns = r.sent_ns - r.intended_ns;
  m.isl = r.input_tokens;
  m.osl = r.output_tokens;
  // OSL counts reasoning and output tokens (usage.completion_tokens, or content events): the
  // reasoning part never exceeds it, whichever way each was counted.
  if (r.reasoning_tokens > 0) {
    m.reasoning_tokens = std::min(r.reasoning_tokens, std::max<int64_t>(m.osl, 0));
  }
  // ITL needs two content chunks: with one, latency - TTFT says nothing about token pacing.
  if (m.ttft_ns && m.request_latency_ns && m.osl > 1 && r.second_token_ns > 0) {
    m.itl_ns =
        static_cast<double>(*m.request_latency_ns - *m.ttft_ns) / static_cast<double>(m.osl - 1);
    if (*m.itl_ns > 0) m.output_tokens_per_s_per_user = 1e9 / *m.itl_ns;
  }
  if (r.cached_tokens >= 0) {
    m.cached_tokens = r.cached_tokens;
    if (r.input_tokens > 0) {
      m.prefix_cache_hit_pct =
          static_cast<double>(r.cached_tokens) * 100.0 / static_cast<double>(r.input_tokens);
    }
  }
  return m;
}

const std::vector<std::string>& slo_metric_tags() {
  static const std::vector<std::string> tags = {summary_tag::kTimeToFirstToken,
                                                "time_to_second_token",
                                                "inter_token_latency",
                                                "request_latency",
                                                "corrected_request_latency",
                                                "schedule_lag",
                                                "output_token_throughput_per_user"};
  return tags;
}

bool is_slo_metric(std::string_view tag) {
  const auto& tags = slo_metric_tags();
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

double MetricStats::p(double q) const {
  for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
    if (kReportedPercentiles[i] == q) return percentiles[i];
  }
  return std::numeric_limits<double>::quiet_NaN();
}

const MetricStats* MetricsSnapshot::find(std::string_view tag) const {
  for (const auto& m : metrics) {
    if (m.tag == tag) return &m;
  }
  return nullptr;
}

double MetricsSnapshot::error_rate() const {
  const int64_t total = request_count + error_request_count;
  return total > 0 ? static_cast<double>(error_request_count) / static_cast<double>(total) : 0;
}

MetricsAggregator::MetricsAggregator(const Config& config)
    : produces_tokens_(config.target.endpoint != Endpoint::kEmbeddings),
      target_urls_(redacted_urls(config.target.urls)),
      targets_(config.target.urls.size()),
      model_list_(config.target.models),
      seed_(config.seed),
      models_(config.target.models.size()) {
  for (const auto& [tag, threshold] : config.slo) {
    if (is_slo_metric(tag)) slos_.push_back({tag, threshold});
  }
  if (config.session_routing.verify) affinity_.emplace(config.session_routing.timeout_s);
  if (config.output.slice_s) {
    timeslices_ = std::make_unique<TimeSliceAggregator>(*config.output.slice_s, !slos_.empty());
  }
  if (config.target.server_timing || config.session_routing.verify) {
    server_timing_ = std::make_unique<ServerTimingAggregator>();
  }
  if (!config.dataset.tenants.empty()) tenants_ = std::make_unique<ClassAggregator>();
  if (config.dataset.agent_hints && config.dataset.agent_hints->priority) {
    priorities_ = std::make_unique<ClassAggregator>();
  }
}

MetricsAggregator::~MetricsAggregator() = default;
MetricsAggregator::MetricsAggregator(MetricsAggregator&&) noexcept = default;
MetricsAggregator& MetricsAggregator::operator=(MetricsAggregator&&) noexcept = default;

double ModelStats::error_rate() const {
  const int64_t total = requests + errors;
  return total > 0 ? static_cast<double>(errors) / static_cast<double>(total) : 0;
}

double TargetStats::error_rate() const {
  const int64_t total = requests + errors;
  return total > 0 ? static_cast<double>(errors) / static_cast<double>(total) : 0;
}

void MetricsAggregator::set_origin_ns(int64_t origin_ns) { origin_ns_ = origin_ns; }

void MetricsAggregator::add(const proto::Record& record, const RequestMetrics& m) {
  // final_marker close_request: a one-token request that only says "this session ended"; it
  // measures nothing about the conversation, so it is counted apart and kept out of every metric.
  // An early release is the same kind of request for a conversation that
  // ended early: counted apart too (summary.json run.session_routing.releases_sent).
  if (record.early_release) {
    ++early_release_count_;
    return;
  }
  if (record.close_request) {
    ++close_request_count_;
    return;
  }
  if (record.turn_index == 0) ++sessions_started_;
  if (affinity_) affinity_->add(record);
  if (record.phase == proto::Phase::kWarmup) {
    ++warmup_count_;
    if (!m.ok) ++warmup_error_count_;
    return;
  }
  if (record.sent_ns > 0) {
    first_send_ns_ =
        first_send_ns_ == 0 ? record.sent_ns : std::min(first_send_ns_, record.sent_ns);
    if (!origin_ns_) origin_ns_ = record.sent_ns;
  }
  last_end_ns_ = std::max(last_end_ns_, record.end_ns);
  // Schedule lag is the load generator's own delay, so failed requests count too.
  if (m.schedule_lag_ns) histograms_[kScheduleLag].record(*m.schedule_lag_ns);
  if (m.ok) {
    add_success(record, m);
    if (server_timing_) server_timing_->add(record, m);
  } else {
    add_error(record);
  }
  if (record.sent_ns > 0 && record.end_ns > record.sent_ns) {
    client_timeline_.add_in_flight(origin_ns_.value_or(record.sent_ns), record.sent_ns,
                                   record.end_ns);
  }
  add_routing_metrics(record, m);
  if (tenants_) tenants_->add(record.tenant, m);
  if (priorities_ && record.priority != proto::kNoPriority) {
    priorities_->add(std::to_string(record.priority), m);
  }
  if (timeslices_) {
    // AIPerf's rule: the slice of the request start (the intended time when never sent).
    const int64_t at_ns = record.sent_ns > 0 ? record.sent_ns : record.intended_ns;
    const bool good = m.ok && !slos_.empty() && meets_slos(m);
    timeslices_->add(at_ns - origin_ns_.value_or(at_ns), record, m, good);
  }
}

void MetricsAggregator::add_routing_metrics(const proto::Record& record, const RequestMetrics& m) {
  if (record.url_index < targets_.size()) {
    TargetAgg& t = targets_[record.url_index];
    if (m.ok) {
      ++t.requests;
      if (m.ttft_ns) t.ttft.record(*m.ttft_ns);
      if (m.request_latency_ns) t.latency.record(*m.request_latency_ns);
    } else {
      ++t.errors;
    }
  }
  families_.add(record);
  add_model_metrics(record, m);
}

// target.models: by the conversation's draw, the same one the assignment made.
void MetricsAggregator::add_model_metrics(const proto::Record& record, const RequestMetrics& m) {
  if (models_.empty()) return;
  ModelAgg& a = models_[model_index_for(model_list_, seed_, record.conversation_index)];
  if (!m.ok) {
    ++a.errors;
    return;
  }
  ++a.requests;
  if (produces_tokens_) a.output_tokens += m.osl;
  if (m.ttft_ns) a.ttft.record(*m.ttft_ns);
  if (m.itl_ns) a.itl.record(std::llround(*m.itl_ns));
  if (m.request_latency_ns) a.latency.record(*m.request_latency_ns);
}

void MetricsAggregator::add_success(const proto::Record& record, const RequestMetrics& m) {
  ++request_count_;
  if (m.ttft_ns) {
    histograms_[kTtft].record(*m.ttft_ns);
    histograms_[record.turn_index == 0 ? kTtftFirstTurn : kTtftLaterTurns].record(*m.ttft_ns);
    histograms_[record.subagent < 0 ? kTtftLead : kTtftSubagent].record(*m.ttft_ns);
    const size_t group = std::min<size_t>(record.turn_index, kMaxTurnGroups - 1);
    if (ttft_by_turn_.size() <= group) ttft_by_turn_.resize(group + 1);
    ttft_by_turn_[group].record(*m.ttft_ns);
  }
  if (m.ttst_ns) histograms_[kTtst].record(*m.ttst_ns);
  if (m.itl_ns) histograms_[kItl].record(std::llround(*m.itl_ns));
  histograms_[kIcl].record_all(record.chunk_gaps_ns.data(), record.chunk_gaps_ns.size());
  if (m.request_latency_ns) histograms_[kRequestLatency].record(*m.request_latency_ns);
  if (m.corrected_request_latency_ns) {
    histograms_[kCorrectedLatency].record(*m.corrected_request_latency_ns);
  }
  // Embeddings produce no tokens: no output_sequence_length (AIPerf's PRODUCES_TOKENS_ONLY).
  const int64_t osl = produces_tokens_ ? m.osl : 0;
  histograms_[kIsl].record(m.isl);
  if (produces_tokens_) histograms_[kOsl].record(osl);
  if (m.ttfo_ns) histograms_[kTtfo].record(*m.ttfo_ns);
  if (m.reasoning_tokens) {
    histograms_[kReasoningTokens].record(*m.reasoning_tokens);
    total_reasoning_tokens_ += *m.reasoning_tokens;
  }
  if (m.output_tokens_per_s_per_user) {
    histograms_[kPerUser].record(std::llround(*m.output_tokens_per_s_per_user * kPerUserScale));
  }
  if (m.cached_tokens) histograms_[kCachedTokens].record(*m.cached_tokens);
  if (m.prefix_cache_hit_pct) {
    histograms_[kHitRate].record(std::llround(*m.prefix_cache_hit_pct * kHitRateScale));
  }
  total_input_tokens_ += m.isl;
  total_output_tokens_ += osl;
  if (!slos_.empty() && meets_slos(m)) ++good_count_;

  Bucket& bucket = series_bucket(record.end_ns > 0 ? record.end_ns : record.sent_ns);
  ++bucket.requests;
  bucket.output_tokens += osl;
  if (m.ttft_ns) {
    bucket.ttft_sum_ns += *m.ttft_ns;
    ++bucket.ttft_count;
    // By first-token time: when the client saw the wait the server's queue shows.
    client_timeline_.add_ttft(origin_ns_.value_or(record.sent_ns), record.sent_ns + *m.ttft_ns,
                              *m.ttft_ns);
  }
}

void MetricsAggregator::add_error(const proto::Record& record) {
  ++error_count_;
  errors_.add(record);
  if (record.end_ns > 0 || record.sent_ns > 0) {
    ++series_bucket(record.end_ns > 0 ? record.end_ns : record.sent_ns).errors;
  }
}

bool MetricsAggregator::meets_slos(const RequestMetrics& m) const {
  for (const Slo& slo : slos_) {
    const std::optional<double> value = slo_value(slo.tag, m);
    if (!value) return false;
    const bool larger_is_better = slo.tag == "output_token_throughput_per_user";
    if (larger_is_better ? *value < slo.threshold : *value > slo.threshold) return false;
  }
  return true;
}

MetricsAggregator::Bucket& MetricsAggregator::series_bucket(int64_t at_ns) {
  return series_.at(at_ns - origin_ns_.value_or(at_ns));
}

MetricsAggregator::Bucket& MetricsAggregator::Bucket::operator+=(const Bucket& o) {
  requests += o.requests;
  errors += o.errors;
  output_tokens += o.output_tokens;
  ttft_sum_ns += o.ttft_sum_ns;
  ttft_count += o.ttft_count;
  return *this;
}

const Histogram* MetricsAggregator::histogram(std::string_view tag) const {
  static_assert(std::size(kDefs) == kMetricCount);
  const MetricDef* def = find_def(tag, std::begin(kDefs), std::end(kDefs));
  return def == nullptr ? nullptr : &histograms_[static_cast<size_t>(def - std::begin(kDefs))];
}

// Family makespan: the lead's first send to the family's last end, families with sub-agents.
void MetricsAggregator::add_family_makespan(MetricsSnapshot& s) const {
  const Histogram makespan = families_.makespans();
  if (!makespan.empty()) s.metrics.push_back(metric_stats(makespan, kFamilyMakespan));
}

// The over-time series, TTFT by turn and the distributions.
void MetricsAggregator::fill_over_time(MetricsSnapshot& s) const {
  s.series_bucket_s = static_cast<double>(series_.width()) / 1e9;
  s.client_timeline_bucket_s = client_timeline_.bucket_s();
  s.client_timeline = client_timeline_.points();
  s.series.reserve(series_.size());
  for (size_t i = 0; i < series_.size(); ++i) {
    const Bucket& b = series_[i];
    SeriesPoint p;
    p.start_s = static_cast<double>(i) * s.series_bucket_s;
    p.requests = b.requests;
    p.errors = b.errors;
    p.output_tokens = b.output_tokens;
    if (b.ttft_count > 0) {
      p.mean_ttft_ms =
          static_cast<double>(b.ttft_sum_ns) / static_cast<double>(b.ttft_count) / kNsPerMs;
    }
    s.series.push_back(p);
  }

  for (size_t turn = 0; turn < ttft_by_turn_.size(); ++turn) {
    if (ttft_by_turn_[turn].empty()) continue;
    TurnTtft t;
    t.turn_index = static_cast<uint32_t>(turn);
    t.and_later = turn + 1 == kMaxTurnGroups;
    t.ttft = metric_stats(ttft_by_turn_[turn], kDefs[kTtft]);
    s.ttft_by_turn.push_back(std::move(t));
  }

  for (size_t i : {kTtft, kItl, kRequestLatency}) {
    if (histograms_[i].empty()) continue;
    s.distributions[kDefs[i].tag] = bins_of(histograms_[i], kDefs[i].scale, kDistributionBins);
  }
}

// Close requests, sessions, per-URL targets and verified affinity.
void MetricsAggregator::fill_routing_metrics(MetricsSnapshot& s) const {
  s.close_request_count = close_request_count_;
  s.early_release_count = early_release_count_;
  s.sessions_started = sessions_started_;
  for (size_t i = 0; i < targets_.size(); ++i) {
    const TargetAgg& a = targets_[i];
    TargetStats t;
    t.index = static_cast<uint32_t>(i);
    t.url = target_urls_[i];
    t.requests = a.requests;
    t.errors = a.errors;
    if (!a.ttft.empty()) t.ttft = metric_stats(a.ttft, kDefs[kTtft]);
    if (!a.latency.empty()) t.request_latency = metric_stats(a.latency, kDefs[kRequestLatency]);
    s.targets.push_back(std::move(t));
  }
  for (size_t i = 0; i < models_.size(); ++i) {
    const ModelAgg& a = models_[i];
    ModelStats m;
    m.name = model_list_[i].name;
    m.weight = model_list_[i].weight;
    m.requests = a.requests;
    m.errors = a.errors;
    m.output_tokens = a.output_tokens;
    if (s.duration_s > 0)
      m.output_token_throughput = static_cast<double>(a.output_tokens) / s.duration_s;
    if (!a.ttft.empty()) m.ttft = metric_stats(a.ttft, kDefs[kTtft]);
    if (!a.itl.empty()) m.inter_token_latency = metric_stats(a.itl, kDefs[kItl]);
    if (!a.latency.empty()) m.request_latency = metric_stats(a.latency, kDefs[kRequestLatency]);
    s.models.push_back(std::move(m));
  }
  if (affinity_) s.affinity = affinity_->summary();
  if (server_timing_) s.server_timing = server_timing_->summary();
  if (tenants_) s.tenants = tenants_->snapshot();
  if (priorities_) {
    s.priorities = priorities_->snapshot();
    // By priority, highest first (Dynamo: higher means more important), not by text.
    std::sort(s.priorities.begin(), s.priorities.end(),
              [](const ClassStats& a, const ClassStats& b) {
                return std::stoll(a.label) > std::stoll(b.label);
              });
  }
}

MetricsSnapshot MetricsAggregator::snapshot() const {
  MetricsSnapshot s;
  s.request_count = request_count_;
  s.error_request_count = error_count_;
  s.good_request_count = good_count_;
  s.has_slo = !slos_.empty();
  s.warmup_request_count = warmup_count_;
  s.warmup_error_count = warmup_error_count_;
  s.total_input_tokens = total_input_tokens_;
  s.total_output_tokens = total_output_tokens_;
  s.total_reasoning_tokens = total_reasoning_tokens_;
  s.first_send_ns = first_send_ns_;
  s.last_end_ns = last_end_ns_;
  if (first_send_ns_ > 0 && last_end_ns_ > first_send_ns_) {
    s.duration_s = static_cast<double>(last_end_ns_ - first_send_ns_) / 1e9;
    s.request_throughput = static_cast<double>(request_count_) / s.duration_s;
    s.output_token_throughput = static_cast<double>(total_output_tokens_) / s.duration_s;
    s.total_token_throughput =
        static_cast<double>(total_input_tokens_ + total_output_tokens_) / s.duration_s;
    s.goodput = static_cast<double>(good_count_) / s.duration_s;
  }

  for (size_t i : kSummaryOrder) {
    // The lead / sub-agent split says something only when the run has sub-agents.
    if (i == kTtftLead && histograms_[kTtftSubagent].empty()) continue;
    if (!histograms_[i].empty()) s.metrics.push_back(metric_stats(histograms_[i], kDefs[i]));
  }
  add_family_makespan(s);
  s.metrics.push_back(single_value(summary_tag::kOutputTokenThroughput, s.output_token_throughput));
  s.metrics.push_back(single_value(summary_tag::kTotalTokenThroughput, s.total_token_throughput));
  s.metrics.push_back(single_value(summary_tag::kRequestThroughput, s.request_throughput));
  if (s.has_slo) {
    s.metrics.push_back(single_value(summary_tag::kGoodput, s.goodput));
    s.metrics.push_back(
        single_value(summary_tag::kGoodRequestCount, static_cast<double>(good_count_)));
  }
  s.metrics.push_back(
      single_value(summary_tag::kRequestCount, static_cast<double>(request_count_)));
  s.metrics.push_back(
      single_value(summary_tag::kErrorRequestCount, static_cast<double>(error_count_)));
  add_token_totals(s, !histograms_[kReasoningTokens].empty());
  s.metrics.push_back(single_value(summary_tag::kBenchmarkDuration, s.duration_s));

  s.errors = errors_.groups();

  fill_over_time(s);

  fill_routing_metrics(s);
  if (timeslices_) {
    s.timeslices = timeslices_->snapshot();
    s.timeslice_s = timeslices_->slice_s();
  }
  return s;
}

size_t MetricsAggregator::memory_bytes() const {
  size_t bytes = sizeof(*this);
  for (const auto& h : histograms_) bytes += h.memory_bytes();
  for (const auto& h : ttft_by_turn_) bytes += h.memory_bytes();
  bytes += series_.memory_bytes() + errors_.memory_bytes();
  bytes += slos_.capacity() * sizeof(Slo);
  for (const auto& t : targets_) bytes += t.ttft.memory_bytes() + t.latency.memory_bytes();
  for (const auto& m : models_) {
    bytes += m.ttft.memory_bytes() + m.itl.memory_bytes() + m.latency.memory_bytes();
  }
  bytes += families_.memory_bytes();
  if (affinity_) bytes += affinity_->memory_bytes();
  bytes += client_timeline_.memory_bytes();
  if (timeslices_) bytes += timeslices_->memory_bytes();
  if (server_timing_) bytes += server_timing_->memory_bytes();
  if (tenants_) bytes += tenants_->memory_bytes();
  if (priorities_) bytes += priorities_->memory_bytes();
  return bytes;
}

}  // namespace convoy::controller
