#include "controller/compare/comparison.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "controller/report/metrics.hpp"
#include "controller/report/summary_keys.hpp"

namespace convoy::controller::compare {

namespace key = summary_key;
namespace tag = summary_tag;

std::optional<double> MetricValues::get(const std::string& stat) const {
  auto it = stats.find(stat);
  if (it == stats.end()) return std::nullopt;
  return it->second;
}

std::optional<double> Column::value(const std::string& tag, const std::string& stat) const {
  auto it = metrics.find(tag);
  if (it == metrics.end()) return std::nullopt;
  return it->second.get(stat);
}

const char* to_string(Better b) {
  switch (b) {
    case Better::kLower:
      return "lower";
    case Better::kHigher:
      return "higher";
    case Better::kNeither:
      break;
  }
  return "-";
}

const std::vector<HeadlineDef>& headline_defs() {
  // Aggregates (throughputs, counts, duration) are read through `avg` only: summary.json
  // carries {unit, avg} for them (and carried every statistic key before schema 1.0).
  static const std::vector<HeadlineDef> defs = {
      {tag::kRequestThroughput, key::kAvg, Better::kHigher},
      {tag::kOutputTokenThroughput, key::kAvg, Better::kHigher},
      {tag::kTotalTokenThroughput, key::kAvg, Better::kHigher},
      {tag::kGoodput, key::kAvg, Better::kHigher},
      {tag::kRequestCount, key::kAvg, Better::kNeither},
      {tag::kErrorRequestCount, key::kAvg, Better::kLower},
      {kErrorRateTag, key::kAvg, Better::kLower},
      {tag::kTimeToFirstToken, key::kP50, Better::kLower},
      {tag::kTimeToFirstToken, key::kP99, Better::kLower},
      {tag::kTimeToFirstOutputToken, key::kP50, Better::kLower},
      {tag::kTimeToSecondToken, key::kP50, Better::kLower},
      {tag::kInterTokenLatency, key::kP50, Better::kLower},
      {tag::kInterTokenLatency, key::kP99, Better::kLower},
      {tag::kRequestLatency, key::kP50, Better::kLower},
      {tag::kRequestLatency, key::kP99, Better::kLower},
      {tag::kOutputTokenThroughputPerUser, key::kP50, Better::kHigher},
      {tag::kScheduleLag, key::kP99, Better::kLower},
      {tag::kPrefixCacheHitRate, key::kAvg, Better::kHigher},
      {tag::kInputSequenceLength, key::kAvg, Better::kNeither},
      {tag::kOutputSequenceLength, key::kAvg, Better::kNeither},
      {tag::kBenchmarkDuration, key::kAvg, Better::kNeither},
  };
  return defs;
}

std::optional<double> relative_diff_pct(std::optional<double> base, std::optional<double> value) {
  if (!base || !value || *base == 0 || !std::isfinite(*base) || !std::isfinite(*value)) {
    return std::nullopt;
  }
  return (*value - *base) / std::fabs(*base) * 100.0;
}

std::string diff_text(std::optional<double> pct) {
  if (!pct) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", *pct);
  std::string text = buf;
  if (text == "-0.0%") text = "+0.0%";
  return text;
}

std::string judgement(Better better, std::optional<double> pct) {
  if (!pct || better == Better::kNeither) return "";
  if (std::fabs(*pct) < 0.05) return "same";
  const bool higher = *pct > 0;
  return higher == (better == Better::kHigher) ? "better" : "worse";
}

std::string judgement(const Row& row, size_t i) {
  if (i >= row.diff_pct.size()) return "";
  std::string j = judgement(row.better, row.diff_pct[i]);
  if (j.empty() || i >= row.noise.size() || !row.noise[i] || row.noise[i]->significant) return j;
  return "within noise";
}

std::string metric_name(const std::string& tag) {
  if (tag == kErrorRateTag) return "Error Rate";  // derived here, not a report metric
  const MetricDef* def = metric_def(tag);
  return def ? def->header : tag;
}

namespace {

// The samples behind a value: a distribution's own count; for an aggregate (and the derived
// error rate) the measured requests, successes and failures.
std::optional<int64_t> sample_count(const Column& c, const HeadlineDef& def) {
  const summary_tag::SummaryMetric* m = summary_tag::find_summary_metric(def.tag);
  if (m && !m->aggregate) {
    const std::optional<double> n = c.value(def.tag, key::kCount);
    return n ? std::optional(static_cast<int64_t>(*n)) : std::nullopt;
  }
  const auto ok = c.value(tag::kRequestCount, key::kAvg);
  const auto failed = c.value(tag::kErrorRequestCount, key::kAvg);
  if (!ok && !failed) return std::nullopt;
  return static_cast<int64_t>(ok.value_or(0) + failed.value_or(0));
}

std::optional<ValueInterval> value_interval(const Column& c, const HeadlineDef& def) {
  const std::optional<double> p = percentile_of_stat(def.stat);
  auto it = c.samples.find(def.tag);
  if (!p || it == c.samples.end()) return std::nullopt;
  return percentile_interval(it->second, *p);
}

// The value's interval over the column's trials (load.trials), else nullopt.
std::optional<ValueInterval> trial_interval(const Column& c, const HeadlineDef& def) {
  auto by_tag = c.trial_intervals.find(def.tag);
  if (by_tag == c.trial_intervals.end()) return std::nullopt;
  auto it = by_tag->second.find(def.stat);
  if (it == by_tag->second.end()) return std::nullopt;
  return it->second;
}

// Column i's difference from the baseline against the noise: the trials' intervals when both
// columns ran trials, else the percentile's rank intervals (records.jsonl in both), else the
// relative rule.
NoiseCheck row_noise(double diff_pct, const std::vector<std::optional<ValueInterval>>& trials,
                     const std::vector<std::optional<ValueInterval>>& ranks, size_t i) {
  if (trials[0] && trials[i]) {
    return judge_noise(diff_pct, trials[0], trials[i], NoiseMethod::kTrialInterval);
  }
  return judge_noise(diff_pct, ranks[0], ranks[i]);
}

}  // namespace

std::vector<Row> headline_rows(const std::vector<Column>& columns) {
  std::vector<Row> rows;
  for (const HeadlineDef& def : headline_defs()) {
    Row row{def.tag, def.stat, metric_name(def.tag), "", def.better, {}, {}, {}, {}, {}};
    if (std::string(def.stat) != key::kAvg) row.name += std::string(" ") + def.stat;
    bool any = false;
    std::vector<std::optional<ValueInterval>> ranks;
    std::vector<std::optional<ValueInterval>> trials;
    for (const Column& c : columns) {
      const std::optional<double> v = c.value(def.tag, def.stat);
      if (v) {
        any = true;
        if (row.unit.empty()) row.unit = c.metrics.at(def.tag).unit;
      }
      row.values.push_back(v);
      row.counts.push_back(v ? sample_count(c, def) : std::nullopt);
      ranks.push_back(v ? value_interval(c, def) : std::nullopt);
      trials.push_back(v ? trial_interval(c, def) : std::nullopt);
      row.intervals.push_back(trials.back() ? trials.back() : ranks.back());
    }
    if (!any) continue;
    for (size_t i = 0; i < row.values.size(); ++i) {
      row.diff_pct.push_back(i == 0 ? std::nullopt
                                    : relative_diff_pct(row.values[0], row.values[i]));
      row.noise.push_back(row.diff_pct[i]
                              ? std::optional(row_noise(*row.diff_pct[i], trials, ranks, i))
                              : std::nullopt);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ConfigDiff> config_differences(const std::vector<Column>& columns) {
  std::set<std::string> keys;
  for (const Column& c : columns) {
    for (const auto& [key, value] : c.config) keys.insert(key);
  }
  std::vector<ConfigDiff> diffs;
  for (const std::string& key : keys) {
    ConfigDiff d{key, {}};
    for (const Column& c : columns) {
      auto it = c.config.find(key);
      d.values.push_back(it == c.config.end() ? std::nullopt : std::optional(it->second));
    }
    const bool differs = std::any_of(d.values.begin(), d.values.end(),
                                     [&](const auto& v) { return v != d.values.front(); });
    if (differs) diffs.push_back(std::move(d));
  }
  return diffs;
}

namespace {

CurvePoint curve_point(const Column& c, const std::string& x_tag) {
  return {c.name, c.value(x_tag, key::kAvg).value_or(0), c.value(tag::kTimeToFirstToken, key::kP50),
          c.value(tag::kTimeToFirstToken, key::kP99)};
}

// Points in the order of the load offered: the stage value where there is one, else as run.
CurveSeries stage_series(const std::string& name, const std::vector<Column>& stages,
                         const std::string& x_tag) {
  std::vector<const Column*> order;
  order.reserve(stages.size());
  for (const Column& s : stages) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const Column* a, const Column* b) {
    if (!a->stage_value || !b->stage_value) return false;
    return *a->stage_value < *b->stage_value;
  });
  CurveSeries series{name, {}};
  for (const Column* s : order) series.points.push_back(curve_point(*s, x_tag));
  return series;
}

}  // namespace

Curve throughput_latency_curve(const std::vector<Column>& columns, bool stages_mode) {
  // The x axis: a throughput tag, with its unit as summary.json writes it.
  auto axis = [](const char* x_tag) {
    return Curve{x_tag, std::string(summary_tag::find_summary_metric(x_tag)->unit), {}};
  };
  Curve curve = axis(tag::kOutputTokenThroughput);
  auto any_output = [](const std::vector<Column>& cs) {
    return std::any_of(cs.begin(), cs.end(), [](const Column& c) {
      return c.value(tag::kOutputTokenThroughput, key::kAvg).value_or(0) > 0;
    });
  };
  bool output = any_output(columns);
  for (const Column& c : columns) output = output || any_output(c.stages);
  if (!output) curve = axis(tag::kRequestThroughput);
  if (stages_mode) {
    const std::string run = columns.empty() ? "" : columns.front().folder;
    curve.series.push_back(stage_series(run, columns, curve.x_tag));
    return curve;
  }
  const bool per_run = std::any_of(columns.begin(), columns.end(),
                                   [](const Column& c) { return c.stages.size() >= 2; });
  if (per_run) {
    for (const Column& c : columns) {
      if (c.stages.size() >= 2) {
        curve.series.push_back(stage_series(c.name, c.stages, curve.x_tag));
      } else {
        curve.series.push_back({c.name, {curve_point(c, curve.x_tag)}});
      }
    }
    return curve;
  }
  CurveSeries all{"all runs", {}};
  for (const Column& c : columns) all.points.push_back(curve_point(c, curve.x_tag));
  std::stable_sort(all.points.begin(), all.points.end(),
                   [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  curve.series.push_back(std::move(all));
  return curve;
}

}  // namespace convoy::controller::compare
