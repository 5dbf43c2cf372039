#include "controller/telemetry/series_store.hpp"

#include <algorithm>
#include <cmath>

#include "common/utf8.hpp"
#include "controller/telemetry/known_metrics.hpp"

namespace convoy::telemetry {

namespace {

using controller::ServerMetricEntry;
using controller::ServerMetricPoint;
using controller::ServerMetricStats;

void append_key(std::string& key, std::string_view part) {
  key.append(part);
  key += '\0';  // cannot appear in a name; label values with NUL are still told apart by length
  key += std::to_string(part.size());
  key += '\0';
}

// `s` with what is not well-formed UTF-8 replaced (what a server sent goes into the report).
std::string clean(std::string s) {
  sanitize_utf8_in_place(s);
  return s;
}

ServerMetricEntry identity(const SeriesStore& store, const Series& s, const std::string& name,
                           std::string type, const char* skip_label = nullptr) {
  ServerMetricEntry e;
  e.endpoint = clean(store.endpoints()[s.endpoint].name);
  e.name = clean(name);
  e.type = std::move(type);
  for (const Label& l : s.labels) {
    if (skip_label && l.name == skip_label) continue;
    e.labels.emplace_back(clean(l.name), clean(l.value));
  }
  if (const KnownMetric* k = s.known) {
    e.headline = true;
    e.title = k->title;
    e.unit = k->unit;
    e.role = k->role;
  }
  return e;
}

ServerMetricStats series_stats(const WindowSummary& s) {
  ServerMetricStats out;
  out.samples = s.samples;
  out.min = s.min;
  out.avg = s.avg;
  out.p50 = s.p50;
  out.p99 = s.p99;
  out.max = s.max;
  out.last = s.last;
  out.delta = s.delta;
  out.rate_per_s = s.rate_per_s;
  out.resets = s.resets;
  return out;
}

// A headline timeline's points ([t_s, v], or [t_s, p50, p99] for a histogram).
std::vector<ServerMetricPoint> points_of(const Timeline* timeline) {
  std::vector<ServerMetricPoint> out;
  if (!timeline) return out;
  for (const Timeline::Point& p : timeline->points()) out.push_back({p.t_s, p.a, p.b});
  return out;
}

ServerMetricEntry series_entry(const SeriesStore& store, const Series& s) {
  const bool counter = s.cumulative();
  std::string type = to_string(s.type);
  if (s.role == SampleRole::kQuantile) type = "summary_quantile";
  if (counter) type = s.type == MetricType::kCounter ? "counter" : "counter_like";
  ServerMetricEntry e = identity(store, s, s.name, std::move(type));
  e.kind = counter ? ServerMetricEntry::Kind::kCounter : ServerMetricEntry::Kind::kGauge;
  e.window = series_stats(s.window.summary(counter));
  if (s.known) e.timeline = points_of(&s.timeline);
  for (size_t i = 0; i < store.stages().size(); ++i) {
    e.stages.push_back(series_stats(store.stage_summary(s, i)));
  }
  return e;
}

// One histogram: the series of one family and label set (less `le`) on one endpoint.
struct HistogramGroup {
  const Series* any = nullptr;                            // for the identity
  std::vector<std::pair<double, const Series*>> buckets;  // by le
  const Series* sum = nullptr;
  const Series* count = nullptr;
};

// count, sum, avg, p50..p99 and buckets from each member's increase as `delta` gives it.
template <typename Delta>
ServerMetricStats histogram_stats(const HistogramGroup& g, const Delta& delta) {
  ServerMetricStats out;
  out.buckets.reserve(g.buckets.size());
  for (const auto& [le, series] : g.buckets) out.buckets.emplace_back(le, delta(*series));
  const auto& buckets = out.buckets;
  out.count = g.count ? delta(*g.count) : (buckets.empty() ? 0 : buckets.back().second);
  out.sum = g.sum ? delta(*g.sum) : std::nan("");
  out.avg = out.count > 0 ? out.sum / out.count : std::nan("");
  out.p50 = bucket_percentile(buckets, 0.50);
  out.p90 = bucket_percentile(buckets, 0.90);
  out.p95 = bucket_percentile(buckets, 0.95);
  out.p99 = bucket_percentile(buckets, 0.99);
  return out;
}

ServerMetricEntry histogram_entry(const SeriesStore& store, HistogramGroup& g) {
  std::sort(g.buckets.begin(), g.buckets.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  ServerMetricEntry e = identity(store, *g.any, g.any->family, "histogram", "le");
  e.kind = ServerMetricEntry::Kind::kHistogram;
  e.window = histogram_stats(g, [](const Series& s) { return s.window.increase; });
  if (g.any->known) {
    e.timeline =
        points_of(g.buckets.empty() ? nullptr : store.histogram_timeline(*g.buckets[0].second));
  }
  for (size_t i = 0; i < store.stages().size(); ++i) {
    e.stages.push_back(histogram_stats(g, [&](const Series& s) {
      const double d = store.stage_summary(s, i).delta;
      return std::isnan(d) ? 0 : d;  // not seen in the stage: nothing observed
    }));
  }
  return e;
}

std::optional<double> le_of(const Series& s) {
  for (const Label& l : s.labels) {
    if (l.name == "le") return parse_prom_number(l.value);
  }
  return std::nullopt;
}

std::vector<controller::ServerMetricEndpoint> endpoints_of(
    const std::vector<EndpointStats>& endpoints) {
  std::vector<controller::ServerMetricEndpoint> out;
  out.reserve(endpoints.size());
  for (const EndpointStats& e : endpoints) {
    out.push_back({clean(e.name), clean(e.url), e.scrapes, e.errors, e.dropped_series,
                   e.malformed_lines, clean(e.first_malformed), clean(e.last_error)});
  }
  return out;
}

std::vector<ServerMetricEntry> metrics_of(const SeriesStore& store) {
  const std::vector<Series>& series = store.series();
  // Histograms are grouped (buckets, sum and count of one label set); every other series is
  // one entry. Order: as the series first appeared.
  std::vector<HistogramGroup> groups;
  std::unordered_map<std::string, size_t> group_index;
  std::vector<std::pair<bool, size_t>> order;  // (a histogram group?, index)
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    if (s.window.samples == 0) continue;  // not seen in the window
    if (s.type != MetricType::kHistogram || s.role == SampleRole::kCreated) {
      order.emplace_back(false, i);
      continue;
    }
    std::string key = std::to_string(s.endpoint) + '\0' + s.family;
    for (const Label& l : s.labels) {
      if (l.name != "le") key += '\0' + l.name + '\0' + l.value + '\0';
    }
    auto [it, fresh] = group_index.emplace(std::move(key), groups.size());
    if (fresh) {
      groups.emplace_back().any = &s;
      order.emplace_back(true, it->second);
    }
    HistogramGroup& g = groups[it->second];
    if (s.role == SampleRole::kBucket) {
      if (auto le = le_of(s)) g.buckets.emplace_back(*le, &s);
    } else if (s.role == SampleRole::kSum) {
      g.sum = &s;
    } else if (s.role == SampleRole::kCount) {
      g.count = &s;
    }
  }
  std::vector<ServerMetricEntry> out;
  out.reserve(order.size());
  for (const auto& [histogram, i] : order) {
    out.push_back(histogram ? histogram_entry(store, groups[i]) : series_entry(store, series[i]));
  }
  return out;
}

}  // namespace

bool Series::cumulative() const {
  switch (type) {
    case MetricType::kCounter:
      return role != SampleRole::kCreated;
    case MetricType::kHistogram:
      return role == SampleRole::kBucket || role == SampleRole::kSum || role == SampleRole::kCount;
    case MetricType::kSummary:
      return role == SampleRole::kSum || role == SampleRole::kCount;
    default:
      return false;
  }
}

SeriesStore::SeriesStore(std::vector<EndpointStats> endpoints, int64_t max_series)
    : endpoints_(std::move(endpoints)),
      max_series_(max_series),
      last_ok_ns_(endpoints_.size()),
      order_(endpoints_.size()) {}

Series* SeriesStore::find_or_add(size_t endpoint, const Sample& s, bool* dropped) {
  std::vector<Label> sorted = s.labels;
  std::sort(sorted.begin(), sorted.end(),
            [](const Label& a, const Label& b) { return a.name < b.name; });
  key_.clear();
  append_key(key_, std::to_string(endpoint));
  append_key(key_, s.name);
  for (const Label& l : sorted) {
    append_key(key_, l.name);
    append_key(key_, l.value);
  }
  if (auto it = index_.find(key_); it != index_.end()) return &series_[it->second];
  if (static_cast<int64_t>(series_.size()) >= max_series_) {
    *dropped = true;
    return nullptr;
  }
  const size_t index = series_.size();
  index_.emplace(key_, index);
  Series& added = series_.emplace_back();
  added.endpoint = endpoint;
  added.name = s.name;
  added.family = s.family;
  added.type = s.type;
  added.role = s.role;
  added.labels = std::move(sorted);
  // A `_created` timestamp is no measurement of the family: never a headline.
  if (s.role != SampleRole::kCreated) added.known = known_metric(s.family);
  if (const auto previous = last_ok_ns_[endpoint]; previous && added.cumulative()) {
    // Absent from the endpoint's previous scrape: it has counted from zero since.
    added.last = 0;
    added.last_ns = *previous;
    added.window.last = 0;
    added.window.last_ns = *previous;
    if (window_start_ns_) {
      added.window.base = 0;
      added.window.base_ns = std::max(*previous, *window_start_ns_);
    }
  }
  if (added.known && added.type == MetricType::kHistogram && added.role == SampleRole::kBucket) {
    link_histogram(added, index);
  }
  return &added;
}

void SeriesStore::link_histogram(Series& s, size_t index) {
  const std::optional<double> le = le_of(s);
  if (!le) return;
  std::string key;
  append_key(key, std::to_string(s.endpoint));
  append_key(key, s.family);
  for (const Label& l : s.labels) {
    if (l.name == "le") continue;
    append_key(key, l.name);
    append_key(key, l.value);
  }
  auto [it, fresh] = histogram_index_.emplace(std::move(key), histograms_.size());
  if (fresh) histograms_.emplace_back();
  HistogramTimeline& h = histograms_[it->second];
  const auto at = std::lower_bound(h.buckets.begin(), h.buckets.end(), *le,
                                   [](const auto& b, double v) { return b.first < v; });
  h.previous.insert(h.previous.begin() + (at - h.buckets.begin()), std::nan(""));
  h.buckets.insert(at, {*le, index});
  s.histogram = static_cast<int>(it->second);
}

const Timeline* SeriesStore::histogram_timeline(const Series& s) const {
  if (s.histogram < 0) return nullptr;
  return &histograms_[static_cast<size_t>(s.histogram)].timeline;
}

namespace {

// A window that starts after the series' last value: that value is its baseline.
WindowStats window_after(const Series& s) {
  WindowStats w;
  w.base = s.last;
  w.base_ns = s.last_ns;
  w.last = s.last;
  w.last_ns = s.last_ns;
  return w;
}

// Sample `s` is of series `series` (its labels as written, the series' sorted: exporters that
// write them sorted, as the Prometheus clients do, match; others take the keyed lookup).
bool same_series(const Series& series, const Sample& s) {
  return series.name == s.name && series.labels == s.labels;
}

bool own_timeline(const Series& s) {
  return s.known && s.type != MetricType::kHistogram && s.type != MetricType::kGaugeHistogram &&
         s.role != SampleRole::kSum && s.role != SampleRole::kCount;
}

}  // namespace

void SeriesStore::add_value(Series& s, double v, int64_t t_ns, int stage) {
  const bool cumulative = s.cumulative();
  s.window.add(v, t_ns, cumulative);
  if (s.open_stage != stage) {
    // Samples of one series come in time order (one scrape per endpoint at a time): the
    // stage it was in is over for it.
    if (s.open_stage >= 0) {
      const auto closed = static_cast<size_t>(s.open_stage);
      if (s.closed.size() <= closed) s.closed.resize(closed + 1, WindowStats{}.summary(cumulative));
      s.closed[closed] = s.open.summary(cumulative);
    }
    if (stage >= 0) s.open = window_after(s);
    s.open_stage = stage;
  }
  if (stage >= 0) s.open.add(v, t_ns, cumulative);
  if (own_timeline(s) && window_start_ns_ && t_ns >= *window_start_ns_) {
    add_timeline_point(s, v, t_ns);
  }
  if (s.histogram >= 0) {
    HistogramTimeline& h = histograms_[static_cast<size_t>(s.histogram)];
    if (h.touched_ns != t_ns) touched_.push_back(static_cast<size_t>(s.histogram));
    h.touched_ns = t_ns;
  }
  s.last = v;
  s.last_ns = t_ns;
}

void SeriesStore::add_timeline_point(Series& s, double v, int64_t t_ns) {
  const double t_s = static_cast<double>(t_ns - *window_start_ns_) / 1e9;
  if (!s.cumulative()) {
    s.timeline.add(t_s, v);
    return;
  }
  // A counter's rate per second since its previous scrape (none before its first).
  if (!s.last || s.last_ns >= t_ns) return;
  const double dt_s = static_cast<double>(t_ns - s.last_ns) / 1e9;
  s.timeline.add(t_s, counter_growth(*s.last, v) / dt_s);
}

void SeriesStore::histogram_point(HistogramTimeline& h, int64_t t_ns) {
  // The observations between the previous scrape and this one: each bucket's increase.
  std::vector<std::pair<double, double>> interval;
  interval.reserve(h.buckets.size());
  bool complete = true;
  for (size_t i = 0; i < h.buckets.size(); ++i) {
    const Series& bucket = series_[h.buckets[i].second];
    const double now = bucket.last.value_or(std::nan(""));
    const double before = h.previous[i];
    if (std::isnan(now) || std::isnan(before)) complete = false;
    interval.emplace_back(h.buckets[i].first, counter_growth(before, now));
    h.previous[i] = now;
  }
  if (!complete || !window_start_ns_ || t_ns < *window_start_ns_) return;
  const double t_s = static_cast<double>(t_ns - *window_start_ns_) / 1e9;
  h.timeline.add(t_s, bucket_percentile(interval, 0.50), bucket_percentile(interval, 0.99));
}

int SeriesStore::stage_at(int64_t t_ns) const {
  for (size_t k = stages_.size(); k-- > 0;) {
    const StageMark& m = stages_[k];
    if (t_ns < m.start_ns) continue;
    return m.end_ns && t_ns >= *m.end_ns ? -1 : static_cast<int>(k);
  }
  return -1;
}

int64_t SeriesStore::add_scrape(size_t endpoint, int64_t t_ns, std::span<const Sample> samples,
                                int64_t malformed, const std::string& first_malformed,
                                int64_t* dropped, CpuSlices* slices) {
  EndpointStats& e = endpoints_.at(endpoint);
  ++e.scrapes;
  e.malformed_lines += malformed;
  if (e.first_malformed.empty()) e.first_malformed = first_malformed;
  const int stage = stage_at(t_ns);
  touched_.clear();
  int64_t kept = 0;
  int64_t lost = 0;
  const std::vector<size_t>& previous = order_.at(endpoint);
  next_order_.clear();
  for (size_t k = 0; k < samples.size(); ++k) {
    if (slices) slices->point();
    const Sample& s = samples[k];
    Series* series = nullptr;
    if (k < previous.size() && previous[k] != kNone && same_series(series_[previous[k]], s)) {
      series = &series_[previous[k]];
    } else {
      bool was_dropped = false;
      series = find_or_add(endpoint, s, &was_dropped);
    }
    if (!series) {
      ++lost;
      next_order_.push_back(kNone);
      continue;
    }
    next_order_.push_back(static_cast<size_t>(series - series_.data()));
    add_value(*series, s.value, t_ns, stage);
    ++kept;
  }
  order_[endpoint].swap(next_order_);
  for (size_t h : touched_) histogram_point(histograms_[h], t_ns);
  last_ok_ns_[endpoint] = t_ns;
  e.samples += kept;
  e.dropped_series = std::max(e.dropped_series, lost);
  last_scrape_ns_ = std::max(last_scrape_ns_, t_ns);
  if (dropped) *dropped = lost;
  return kept;
}

void SeriesStore::add_error(size_t endpoint, const std::string& error) {
  EndpointStats& e = endpoints_.at(endpoint);
  ++e.scrapes;
  ++e.errors;
  e.last_error = error;
}

void SeriesStore::start_window(int64_t t_ns) {
  window_start_ns_ = t_ns;
  // What came before the window is only the baseline its first sample is measured from.
  for (Series& s : series_) {
    s.window = window_after(s);
    s.timeline = Timeline{};
  }
  for (HistogramTimeline& h : histograms_) h.timeline = Timeline{};
}

void SeriesStore::mark_stage(std::string name, int64_t t_ns) {
  if (!stages_.empty() && !stages_.back().end_ns) stages_.back().end_ns = t_ns;
  stages_.push_back({std::move(name), t_ns, std::nullopt});
}

void SeriesStore::mark_settle(int64_t t_ns) {
  if (!stages_.empty() && !stages_.back().end_ns) stages_.back().end_ns = t_ns;
}

WindowSummary SeriesStore::stage_summary(const Series& s, size_t i) const {
  const bool cumulative = s.cumulative();
  if (static_cast<int>(i) == s.open_stage) return s.open.summary(cumulative);
  if (i < s.closed.size()) return s.closed[i];
  return WindowStats{}.summary(cumulative);
}

controller::ServerMetrics SeriesStore::server_metrics(double interval_s) const {
  controller::ServerMetrics m;
  m.interval_s = interval_s;
  m.window_start_ns = window_start_ns_;
  m.window_end_ns = last_scrape_ns_;
  for (const StageMark& s : stages_) m.stages.push_back({clean(s.name), s.start_ns, s.end_ns});
  m.series = static_cast<int64_t>(series_.size());
  m.max_series = max_series_;
  m.endpoints = endpoints_of(endpoints_);
  m.metrics = metrics_of(*this);
  return m;
}

}  // namespace convoy::telemetry
