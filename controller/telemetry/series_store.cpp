#include "controller/telemetry/series_store.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>

#include "common/utf8.hpp"
#include "controller/telemetry/known_metrics.hpp"

namespace convoy::telemetry {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void number(JsonWriter& w, double v) {
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}

void string(JsonWriter& w, const std::string& s) {
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
}

void labels_object(JsonWriter& w, const std::vector<Label>& labels, const char* skip = nullptr) {
  w.Key("labels");
  w.StartObject();
  for (const Label& l : labels) {
    if (skip && l.name == skip) continue;
    w.Key(l.name.c_str(), static_cast<rapidjson::SizeType>(l.name.size()));
    string(w, l.value);
  }
  w.EndObject();
}

void append_key(std::string& key, std::string_view part) {
  key.append(part);
  key += '\0';  // cannot appear in a name; label values with NUL are still told apart by length
  key += std::to_string(part.size());
  key += '\0';
}

void identity(JsonWriter& w, const SeriesStore& store, const Series& s, const std::string& name,
              const char* type, const char* skip_label = nullptr) {
  w.Key("endpoint");
  string(w, store.endpoints()[s.endpoint].name);
  w.Key("name");
  string(w, name);
  w.Key("type");
  w.String(type);
  labels_object(w, s.labels, skip_label);
  if (const KnownMetric* k = known_metric(s.family)) {
    w.Key("headline");
    w.Bool(true);
    w.Key("title");
    w.String(k->title.data(), static_cast<rapidjson::SizeType>(k->title.size()));
    w.Key("unit");
    w.String(k->unit.data(), static_cast<rapidjson::SizeType>(k->unit.size()));
  }
}

double span_s(const Series& s) {
  const int64_t from = s.base ? s.base_ns : s.first_ns;
  return static_cast<double>(s.last_ns - from) / 1e9;
}

void write_gauge(JsonWriter& w, const SeriesStore& store, const Series& s) {
  w.StartObject();
  const bool quantile = s.role == SampleRole::kQuantile;
  identity(w, store, s, s.name, quantile ? "summary_quantile" : to_string(s.type));
  w.Key("samples");
  w.Int64(s.samples);
  const bool any = s.finite_samples > 0;
  const double nan = std::nan("");
  w.Key("min");
  number(w, any ? s.min : nan);
  w.Key("avg");
  number(w, any ? s.sum / static_cast<double>(s.finite_samples) : nan);
  w.Key("p50");
  number(w, s.values.percentile(0.50));
  w.Key("p99");
  number(w, s.values.percentile(0.99));
  w.Key("max");
  number(w, any ? s.max : nan);
  w.Key("last");
  number(w, s.last.value_or(nan));
  w.EndObject();
}

void write_counter(JsonWriter& w, const SeriesStore& store, const Series& s) {
  w.StartObject();
  identity(w, store, s, s.name, s.type == MetricType::kCounter ? "counter" : "counter_like");
  w.Key("samples");
  w.Int64(s.samples);
  w.Key("delta");
  number(w, s.increase);
  w.Key("rate_per_s");
  const double span = span_s(s);
  number(w, span > 0 ? s.increase / span : std::nan(""));
  w.Key("resets");
  w.Int64(s.resets);
  w.Key("last");
  number(w, s.last.value_or(std::nan("")));
  w.EndObject();
}

// One histogram: the series of one family and label set (less `le`) on one endpoint.
struct HistogramGroup {
  const Series* any = nullptr;                     // for the identity
  std::vector<std::pair<double, double>> buckets;  // le -> increase
  std::optional<double> sum;
  std::optional<double> count;
};

void write_histogram(JsonWriter& w, const SeriesStore& store, HistogramGroup& g) {
  std::sort(g.buckets.begin(), g.buckets.end());
  w.StartObject();
  identity(w, store, *g.any, g.any->family, "histogram", "le");
  const double count = g.count ? *g.count : (g.buckets.empty() ? 0 : g.buckets.back().second);
  w.Key("count");
  number(w, count);
  w.Key("sum");
  number(w, g.sum.value_or(std::nan("")));
  w.Key("avg");
  number(w, g.sum && count > 0 ? *g.sum / count : std::nan(""));
  constexpr std::pair<const char*, double> kQuantiles[] = {
      {"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}};
  for (const auto& [key, q] : kQuantiles) {
    w.Key(key);
    number(w, bucket_percentile(g.buckets, q));
  }
  w.Key("buckets");
  w.StartArray();
  for (const auto& [le, n] : g.buckets) {
    w.StartObject();
    w.Key("le");
    if (std::isinf(le)) {
      w.String("+Inf");
    } else {
      number(w, le);
    }
    w.Key("count");
    number(w, n);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::optional<double> le_of(const Series& s) {
  for (const Label& l : s.labels) {
    if (l.name == "le") return parse_prom_number(l.value);
  }
  return std::nullopt;
}

void write_endpoints(JsonWriter& w, const std::vector<EndpointStats>& endpoints) {
  auto text_or_null = [&w](const std::string& s) {
    if (s.empty()) {
      w.Null();
    } else {
      string(w, s);
    }
  };
  w.Key("endpoints");
  w.StartArray();
  for (const EndpointStats& e : endpoints) {
    w.StartObject();
    w.Key("name");
    string(w, e.name);
    w.Key("url");
    string(w, e.url);
    w.Key("scrapes");
    w.Int64(e.scrapes);
    w.Key("errors");
    w.Int64(e.errors);
    w.Key("dropped_series");
    w.Int64(e.dropped_series);
    w.Key("malformed_lines");
    w.Int64(e.malformed_lines);
    w.Key("first_malformed");
    text_or_null(e.first_malformed);
    w.Key("last_error");
    text_or_null(e.last_error);
    w.EndObject();
  }
  w.EndArray();
}

void write_metrics(JsonWriter& w, const SeriesStore& store) {
  const std::vector<Series>& series = store.series();
  // Histograms are grouped (buckets, sum and count of one label set); every other series is
  // one entry. Order: as the series first appeared.
  std::vector<HistogramGroup> groups;
  std::unordered_map<std::string, size_t> group_index;
  std::vector<std::pair<bool, size_t>> order;  // (a histogram group?, index)
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    if (s.samples == 0) continue;  // not seen in the window
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
      if (auto le = le_of(s)) g.buckets.emplace_back(*le, s.increase);
    } else if (s.role == SampleRole::kSum) {
      g.sum = s.increase;
    } else if (s.role == SampleRole::kCount) {
      g.count = s.increase;
    }
  }
  w.Key("metrics");
  w.StartArray();
  for (const auto& [histogram, i] : order) {
    if (histogram) {
      write_histogram(w, store, groups[i]);
    } else if (series[i].cumulative()) {
      write_counter(w, store, series[i]);
    } else {
      write_gauge(w, store, series[i]);
    }
  }
  w.EndArray();
}

}  // namespace

void ValueSample::add(double v) {
  if (seen_++ % stride_ != 0) return;
  if (kept_.size() == kCapacity) {
    // Keep every other value: the kept ones stay evenly spread over the whole run.
    for (size_t i = 0; i < kCapacity / 2; ++i) kept_[i] = kept_[2 * i];
    kept_.resize(kCapacity / 2);
    stride_ *= 2;
    if ((seen_ - 1) % stride_ != 0) return;
  }
  kept_.push_back(v);
}

double ValueSample::percentile(double q) const {
  if (kept_.empty()) return std::nan("");
  std::vector<double> sorted = kept_;
  std::sort(sorted.begin(), sorted.end());
  const double rank = std::ceil(q * static_cast<double>(sorted.size()));
  const size_t i = rank < 1 ? 0 : std::min(sorted.size() - 1, static_cast<size_t>(rank) - 1);
  return sorted[i];
}

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

double bucket_percentile(const std::vector<std::pair<double, double>>& cumulative, double q) {
  if (cumulative.empty()) return std::nan("");
  const double total = cumulative.back().second;
  if (!(total > 0)) return std::nan("");
  const double rank = q * total;
  double lower_bound = 0;
  double lower_count = 0;
  for (size_t i = 0; i < cumulative.size(); ++i) {
    const auto [le, count] = cumulative[i];
    if (count >= rank) {
      if (std::isinf(le)) return i == 0 ? std::nan("") : cumulative[i - 1].first;
      if (i == 0 && le <= 0) return le;
      const double in_bucket = count - lower_count;
      if (in_bucket <= 0) return le;
      return lower_bound + (le - lower_bound) * (rank - lower_count) / in_bucket;
    }
    lower_bound = le;
    lower_count = count;
  }
  return cumulative.back().first;
}

SeriesStore::SeriesStore(std::vector<EndpointStats> endpoints, int64_t max_series)
    : endpoints_(std::move(endpoints)), max_series_(max_series), last_ok_ns_(endpoints_.size()) {}

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
  index_.emplace(key_, series_.size());
  Series& added = series_.emplace_back();
  added.endpoint = endpoint;
  added.name = s.name;
  added.family = s.family;
  added.type = s.type;
  added.role = s.role;
  added.labels = std::move(sorted);
  if (const auto previous = last_ok_ns_[endpoint]; previous && added.cumulative()) {
    // Absent from the endpoint's previous scrape: it has counted from zero since.
    added.last = 0;
    added.last_ns = *previous;
    if (window_start_ns_) {
      added.base = 0;
      added.base_ns = std::max(*previous, *window_start_ns_);
    }
  }
  return &added;
}

void SeriesStore::add_value(Series& s, double v, int64_t t_ns, bool in_window) {
  if (in_window) {
    if (s.samples++ == 0) s.first_ns = t_ns;
    if (!std::isnan(v)) {
      ++s.finite_samples;
      s.min = std::min(s.min, v);
      s.max = std::max(s.max, v);
      s.sum += v;
    }
    if (s.cumulative()) {
      // A counter that went down was reset (the server restarted): it counted from 0 since.
      if (s.last && !std::isnan(*s.last) && !std::isnan(v)) {
        if (v >= *s.last) {
          s.increase += v - *s.last;
        } else {
          s.increase += v;
          ++s.resets;
        }
      }
    } else {
      s.values.add(v);
    }
  }
  s.last = v;
  s.last_ns = t_ns;
}

int64_t SeriesStore::add_scrape(size_t endpoint, int64_t t_ns, const std::vector<Sample>& samples,
                                int64_t malformed, const std::string& first_malformed,
                                int64_t* dropped) {
  EndpointStats& e = endpoints_.at(endpoint);
  ++e.scrapes;
  e.malformed_lines += malformed;
  if (e.first_malformed.empty()) e.first_malformed = first_malformed;
  int64_t kept = 0;
  int64_t lost = 0;
  for (const Sample& s : samples) {
    bool was_dropped = false;
    Series* series = find_or_add(endpoint, s, &was_dropped);
    if (!series) {
      ++lost;
      continue;
    }
    add_value(*series, s.value, t_ns, true);
    ++kept;
  }
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
  for (Series& s : series_) {
    // What came before the window is only the baseline its first sample is measured from.
    s.base = s.last;
    s.base_ns = s.last_ns;
    s.samples = 0;
    s.finite_samples = 0;
    s.min = std::numeric_limits<double>::infinity();
    s.max = -std::numeric_limits<double>::infinity();
    s.sum = 0;
    s.increase = 0;
    s.resets = 0;
    s.values = ValueSample{};
  }
}

std::string SeriesStore::summary_json(double interval_s) const {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("interval_s");
  w.Double(interval_s);
  w.Key("window");
  w.StartObject();
  w.Key("start_ns");
  if (window_start_ns_) {
    w.Int64(*window_start_ns_);
  } else {
    w.Null();
  }
  w.Key("end_ns");
  w.Int64(last_scrape_ns_);
  w.EndObject();
  w.Key("series");
  w.Int64(static_cast<int64_t>(series_.size()));
  w.Key("max_series");
  w.Int64(max_series_);
  write_endpoints(w, endpoints_);
  write_metrics(w, *this);
  w.EndObject();
  std::string out(buffer.GetString(), buffer.GetSize());
  sanitize_utf8_in_place(out);
  return out;
}

}  // namespace convoy::telemetry
