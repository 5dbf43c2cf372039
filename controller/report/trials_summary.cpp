#include "controller/report/trials_summary.hpp"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>

#include "common/build_info.hpp"
#include "common/utf8.hpp"
#include "controller/report/summary_keys.hpp"
#include "controller/report/summary_writer.hpp"

namespace convoy::controller {

namespace {

namespace key = summary_key;
namespace tag = summary_tag;
using TrialsJsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

constexpr char kErrorRate[] = "error_rate";  // derived, as `convoy compare` derives it
constexpr size_t kMaxTrialColumns = 6;       // more trials: the table shows their count

const rapidjson::Value* trial_member(const rapidjson::Value& obj, const char* name) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(name);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::optional<double> trial_number(const rapidjson::Value& obj, const char* name) {
  const rapidjson::Value* v = trial_member(obj, name);
  if (!v || !v->IsNumber() || !std::isfinite(v->GetDouble())) return std::nullopt;
  return v->GetDouble();
}

std::optional<double> trial_count_avg(const rapidjson::Value& doc, const char* metric) {
  const rapidjson::Value* m = trial_member(doc, metric);
  return m ? trial_number(*m, key::kAvg) : std::nullopt;
}

std::string trial_number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

const std::vector<TrialFigure>& trial_figures() {
  static const std::vector<TrialFigure> figures = {
      {tag::kRequestThroughput, key::kAvg, "request throughput"},
      {tag::kOutputTokenThroughput, key::kAvg, "output token throughput"},
      {kErrorRate, key::kAvg, "error rate"},
      {tag::kTimeToFirstToken, key::kP50, "TTFT p50"},
      {tag::kTimeToFirstToken, key::kP99, "TTFT p99"},
      {tag::kInterTokenLatency, key::kP50, "ITL p50"},
      {tag::kInterTokenLatency, key::kP99, "ITL p99"},
      {tag::kRequestLatency, key::kP50, "request latency p50"},
      {tag::kRequestLatency, key::kP99, "request latency p99"},
  };
  return figures;
}

bool read_trial_summary(const std::string& summary_text, TrialResult& r) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(summary_text.c_str(), summary_text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    r.unread_reason = "summary.json is not a JSON object";
    return false;
  }
  for (const TrialFigure& f : trial_figures()) {
    const rapidjson::Value* m = trial_member(doc, f.tag);
    if (!m || !m->IsObject()) continue;
    if (auto v = trial_number(*m, f.stat)) r.values[f.tag][f.stat] = *v;
    if (const rapidjson::Value* unit = trial_member(*m, key::kUnit); unit && unit->IsString()) {
      r.units[f.tag] = unit->GetString();
    }
    if (auto n = trial_number(*m, key::kCount)) r.counts[f.tag] = *n;
  }
  r.request_count = trial_count_avg(doc, tag::kRequestCount);
  r.error_request_count = trial_count_avg(doc, tag::kErrorRequestCount);
  const double ok = r.request_count.value_or(0);
  const double failed = r.error_request_count.value_or(0);
  if (ok + failed > 0) {
    r.values[kErrorRate][key::kAvg] = failed / (ok + failed) * 100.0;
    r.units[kErrorRate] = "%";
  }
  if (const rapidjson::Value* run = trial_member(doc, key::kRun)) {
    const rapidjson::Value* yaml = trial_member(*run, key::kConfigYaml);
    if (yaml && yaml->IsString()) r.config_yaml = yaml->GetString();
  }
  return true;
}

std::optional<TrialInterval> figure_interval(const TrialsSummary& s, const TrialFigure& f) {
  std::vector<double> values;
  for (const TrialResult& t : s.trials) {
    if (!t.included) continue;
    auto m = t.values.find(f.tag);
    if (m == t.values.end()) continue;
    auto v = m->second.find(f.stat);
    if (v != m->second.end()) values.push_back(v->second);
  }
  return t_interval(values);
}

namespace {

std::string figure_unit(const TrialsSummary& s, const std::string& metric) {
  for (const TrialResult& t : s.trials) {
    auto it = t.units.find(metric);
    if (it != t.units.end()) return it->second;
  }
  return "";
}

std::vector<const TrialResult*> included_trials(const TrialsSummary& s) {
  std::vector<const TrialResult*> out;
  for (const TrialResult& t : s.trials) {
    if (t.included) out.push_back(&t);
  }
  return out;
}

void put_text(TrialsJsonWriter& w, const char* name, const std::string& text) {
  w.Key(name);
  if (text.empty()) {
    w.Null();
  } else {
    w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
  }
}

// The top-level metric tags, as a run's summary.json has them, holding the trials' means (and a
// distribution's count summed over the trials): what `convoy compare` reads as the column.
void write_mean_metrics(TrialsJsonWriter& w, const TrialsSummary& s) {
  std::set<std::string> written;
  for (const TrialFigure& f : trial_figures()) {
    if (std::string(f.tag) == kErrorRate || written.count(f.tag)) continue;
    bool any = false;
    for (const TrialFigure& g : trial_figures()) {
      if (std::string(g.tag) != f.tag) continue;
      const auto in = figure_interval(s, g);
      if (!in) continue;
      if (!any) {
        w.Key(f.tag);
        w.StartObject();
        put_text(w, key::kUnit, figure_unit(s, f.tag));
        any = true;
      }
      w.Key(g.stat);
      w.Double(in->mean);
    }
    if (!any) continue;
    written.insert(f.tag);
    double count = 0;
    bool counted = false;
    for (const TrialResult* t : included_trials(s)) {
      if (auto c = t->counts.find(f.tag); c != t->counts.end()) {
        count += c->second;
        counted = true;
      }
    }
    if (counted) {
      w.Key(key::kCount);
      w.Double(count);
    }
    w.EndObject();
  }
  for (const char* counted : {tag::kRequestCount, tag::kErrorRequestCount}) {
    std::vector<double> values;
    for (const TrialResult* t : included_trials(s)) {
      const bool successes = std::string_view(counted) == tag::kRequestCount;
      const auto& v = successes ? t->request_count : t->error_request_count;
      if (v) values.push_back(*v);
    }
    const auto in = t_interval(values);
    if (!in) continue;
    w.Key(counted);
    w.StartObject();
    put_text(w, key::kUnit, "requests");
    w.Key(key::kAvg);
    w.Double(in->mean);
    w.EndObject();
  }
}

void write_trial_runs(TrialsJsonWriter& w, const TrialsSummary& s) {
  w.Key(key::kTrialRuns);
  w.StartArray();
  for (const TrialResult& t : s.trials) {
    w.StartObject();
    w.Key(key::kTrialIndex);
    w.Int(t.index);
    w.Key(key::kTrialSeed);
    w.Uint64(t.seed);
    put_text(w, key::kTrialFolder, t.folder);
    w.Key(key::kTrialExitCode);
    w.Int(t.exit_code);
    w.Key(key::kTrialIncluded);
    w.Bool(t.included);
    if (!t.unread_reason.empty()) put_text(w, "unread", t.unread_reason);
    w.EndObject();
  }
  w.EndArray();
}

void write_interval(TrialsJsonWriter& w, const TrialsSummary& s, const TrialFigure& f,
                    const TrialInterval& in) {
  w.StartObject();
  put_text(w, key::kUnit, figure_unit(s, f.tag));
  w.Key(key::kTrialValues);
  w.StartArray();
  for (const TrialResult* t : included_trials(s)) {
    auto m = t->values.find(f.tag);
    if (m == t->values.end() || !m->second.count(f.stat)) {
      w.Null();  // this trial did not measure it (no success: no latency)
    } else {
      w.Double(m->second.at(f.stat));
    }
  }
  w.EndArray();
  w.Key(key::kTrialN);
  w.Int64(in.n);
  w.Key(key::kTrialMean);
  w.Double(in.mean);
  w.Key(key::kStd);
  w.Double(in.stddev);
  w.Key(key::kTrialLow);
  w.Double(in.low);
  w.Key(key::kTrialHigh);
  w.Double(in.high);
  w.EndObject();
}

void write_trials_block(TrialsJsonWriter& w, const TrialsSummary& s) {
  w.Key(key::kTrials);
  w.StartObject();
  w.Key(key::kTrialPlanned);
  w.Int64(s.planned);
  w.Key(key::kTrialCompleted);
  w.Int64(static_cast<int64_t>(included_trials(s).size()));
  w.Key(key::kTrialConfidence);
  w.Double(kTrialsConfidence);
  put_text(w, key::kTrialMethod, kTrialsIntervalMethod);
  put_text(w, "method_detail",
           "Student t over the trial values, mean +/- t(0.975, n-1) * s / sqrt(n); a "
           "percentile's value per trial is that trial's own percentile");
  put_text(w, "seeds", "trial t ran with seed + t - 1");
  write_trial_runs(w, s);
  w.Key(key::kTrialIntervals);
  w.StartObject();
  std::string open_tag;
  for (const TrialFigure& f : trial_figures()) {
    const auto in = figure_interval(s, f);
    if (!in) continue;
    if (open_tag != f.tag) {
      if (!open_tag.empty()) w.EndObject();
      w.Key(f.tag);
      w.StartObject();
      open_tag = f.tag;
    }
    w.Key(f.stat);
    write_interval(w, s, f, *in);
  }
  if (!open_tag.empty()) w.EndObject();
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string trials_summary_json(const TrialsSummary& s) {
  rapidjson::StringBuffer buffer;
  TrialsJsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  put_text(w, key::kSchemaVersion, kSummarySchemaVersion);
  put_text(w, key::kConvoyVersion, build_info::version());
  put_text(w, key::kBenchmarkId, s.benchmark_id);
  put_text(w, key::kStartTime, s.start_time);
  put_text(w, key::kEndTime, s.end_time);
  w.Key(key::kWasCancelled);
  w.Bool(s.was_cancelled);
  write_mean_metrics(w, s);
  w.Key(key::kRun);
  w.StartObject();
  put_text(w, key::kConvoyVersion, build_info::version());
  put_text(w, key::kConfigYaml, s.config_yaml);
  w.EndObject();
  write_trials_block(w, s);
  w.EndObject();
  std::string out(buffer.GetString(), buffer.GetSize());
  out += '\n';
  sanitize_utf8_in_place(out);
  return out;
}

void print_trials_table(std::ostream& out, const TrialsSummary& s) {
  const auto runs = included_trials(s);
  const bool each = runs.size() <= kMaxTrialColumns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"metric", "unit"};
  if (each) {
    for (const TrialResult* t : runs) header.push_back("trial " + std::to_string(t->index));
  } else {
    header.push_back("trials");
  }
  header.insert(header.end(), {"mean", "95% interval"});
  rows.push_back(header);
  for (const TrialFigure& f : trial_figures()) {
    const auto in = figure_interval(s, f);
    if (!in) continue;
    std::vector<std::string> row = {f.label, figure_unit(s, f.tag)};
    if (each) {
      for (const TrialResult* t : runs) {
        auto m = t->values.find(f.tag);
        const bool has = m != t->values.end() && m->second.count(f.stat);
        row.push_back(has ? trial_number_text(m->second.at(f.stat)) : "-");
      }
    } else {
      row.push_back(std::to_string(in->n));
    }
    row.push_back(trial_number_text(in->mean));
    row.push_back(in->n < 2 ? "(one trial)"
                            : "[" + trial_number_text(in->low) + ", " +
                                  trial_number_text(in->high) + "]");
    rows.push_back(row);
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  out << "Trials: " << runs.size() << " of " << s.planned
      << " finished; Student t 95% intervals over the trial values\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  }
}

}  // namespace convoy::controller
