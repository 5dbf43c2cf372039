#include "controller/compare/run_loader.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/histogram.hpp"
#include "common/redact.hpp"
#include "controller/report/record_keys.hpp"
#include "controller/report/summary_keys.hpp"

namespace convoy::controller::compare {

namespace fs = std::filesystem;
namespace key = summary_key;
namespace tag = summary_tag;

namespace {

std::string text_of(const rapidjson::Value& v) {
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsNull()) return "null";
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsNumber()) {
    std::ostringstream out;
    out << v.GetDouble();
    return out.str();
  }
  return "";
}

const rapidjson::Value* member(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// Every member that is a metric tag: an object with a string `unit`. Only finite numbers are
// kept, so an aggregate's {unit, avg} and a distribution's 16 keys read the same way.
std::map<std::string, MetricValues> read_metrics(const rapidjson::Value& obj) {
  std::map<std::string, MetricValues> metrics;
  for (const auto& m : obj.GetObject()) {
    const rapidjson::Value* unit = member(m.value, key::kUnit);
    if (!unit || !unit->IsString()) continue;
    MetricValues values{unit->GetString(), {}};
    for (const auto& s : m.value.GetObject()) {
      if (s.value.IsNumber() && std::isfinite(s.value.GetDouble())) {
        values.stats[s.name.GetString()] = s.value.GetDouble();
      }
    }
    metrics[m.name.GetString()] = std::move(values);
  }
  // Derived: the failed share of measured requests, in %.
  auto ok = metrics.find(tag::kRequestCount);
  auto failed = metrics.find(tag::kErrorRequestCount);
  if (ok != metrics.end() && failed != metrics.end()) {
    const double n = ok->second.get(key::kAvg).value_or(0);
    const double e = failed->second.get(key::kAvg).value_or(0);
    if (n + e > 0) metrics[kErrorRateTag] = {"%", {{key::kAvg, e / (n + e) * 100.0}}};
  }
  return metrics;
}

// The summary's first/later-turn TTFT split, as two turn groups.
void summary_turns(Column& c) {
  c.ttft_by_turn.clear();
  const std::pair<const char*, const char*> groups[] = {{"0", tag::kTimeToFirstTokenFirstTurn},
                                                        {"1+", tag::kTimeToFirstTokenLaterTurns}};
  for (const auto& [label, turns] : groups) {
    if (!c.value(turns, key::kP50)) continue;
    c.ttft_by_turn.push_back({label, c.value(turns, key::kP50).value_or(NAN),
                              c.value(turns, key::kP90).value_or(NAN),
                              static_cast<int64_t>(c.value(turns, key::kCount).value_or(0))});
  }
  c.ttft_by_turn_source = c.ttft_by_turn.empty() ? "" : "summary.json";
}

void flatten_json(const rapidjson::Value& v, const std::string& prefix,
                  std::map<std::string, std::string>& out) {
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      flatten_json(m.value, prefix.empty() ? m.name.GetString() : prefix + "." + m.name.GetString(),
                   out);
    }
    return;
  }
  out[prefix] = text_of(v);
}

Column stage_column(const std::string& folder, const rapidjson::Value& st, size_t index) {
  Column c;
  c.folder = folder;
  const rapidjson::Value* name = member(st, key::kName);
  c.stage = name && name->IsString() ? name->GetString() : "stage " + std::to_string(index);
  c.name = c.stage;
  if (const rapidjson::Value* v = member(st, key::kValue); v && v->IsNumber()) {
    c.stage_value = v->GetDouble();
  }
  c.metrics = read_metrics(st);
  if (const rapidjson::Value* cfg = member(st, key::kConfig); cfg && cfg->IsObject()) {
    flatten_json(*cfg, "", c.config);
  }
  summary_turns(c);
  return c;
}

void flatten_node(const YAML::Node& node, const std::string& prefix,
                  std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      flatten_node(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
    return;
  }
  // A summary.json from before URLs were redacted still shows no password in a comparison.
  if (node.IsScalar()) {
    out[prefix] = redact_urls_in(node.Scalar());
  } else if (node.IsSequence()) {
    YAML::Emitter e;
    e << YAML::Flow << node;
    out[prefix] = redact_urls_in(e.c_str());
  } else {
    out[prefix] = "null";
  }
}

}  // namespace

std::map<std::string, std::string> flatten_yaml(const std::string& yaml_text) {
  std::map<std::string, std::string> out;
  try {
    flatten_node(YAML::Load(yaml_text), "", out);
  } catch (const YAML::Exception& e) {
    throw CompareError(std::string("run.config_yaml is not YAML: ") + e.what());
  }
  return out;
}

namespace {

// Why summary.json did not parse, saying where: empty, cut short (a run killed while writing it,
// a full disk), or broken at a byte offset. rapidjson alone said "The document is empty".
std::string json_problem(const std::string& text, const rapidjson::Document& doc) {
  const std::string size = std::to_string(text.size()) + " bytes";
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return "summary.json is empty (" + size + "): truncated before anything was written";
  }
  const std::string why = rapidjson::GetParseError_En(doc.GetParseError());
  const size_t at = doc.GetErrorOffset();
  if (at >= text.size()) {
    return "summary.json is truncated: invalid JSON, it ends at byte offset " +
           std::to_string(text.size()) + " inside the document (" + why + ")";
  }
  return "summary.json is not valid JSON: invalid JSON at byte offset " + std::to_string(at) +
         " of " + size + " (" + why + ")";
}

// A combined summary of load.trials: trials.intervals {tag: {stat: {low, high, ...}}}, each
// value's interval over the trials (docs/report.md, "Trials").
void read_trial_intervals(const rapidjson::Value& doc, Column& c) {
  const rapidjson::Value* trials = member(doc, key::kTrials);
  const rapidjson::Value* intervals = trials ? member(*trials, key::kTrialIntervals) : nullptr;
  if (!intervals || !intervals->IsObject()) return;
  for (const auto& by_tag : intervals->GetObject()) {
    if (!by_tag.value.IsObject()) continue;
    for (const auto& by_stat : by_tag.value.GetObject()) {
      const rapidjson::Value* low = member(by_stat.value, key::kTrialLow);
      const rapidjson::Value* high = member(by_stat.value, key::kTrialHigh);
      if (!low || !high || !low->IsNumber() || !high->IsNumber()) continue;
      c.trial_intervals[by_tag.name.GetString()][by_stat.name.GetString()] =
          ValueInterval{low->GetDouble(), high->GetDouble()};
    }
  }
}

}  // namespace

Column column_from_summary(const std::string& folder, const std::string& summary_text) {
  rapidjson::Document doc;
  // Full precision: rapidjson's default number parsing may land one unit in the last place off,
  // and compare.json must show each run's own values exactly (a value written back then differs
  // from summary.json's: the e2e test saw 189.907 != 189.907).
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(summary_text.c_str(), summary_text.size());
  if (doc.HasParseError())
    throw CompareError(folder + " is not a convoy run: " + json_problem(summary_text, doc));
  const rapidjson::Value* run = member(doc, key::kRun);
  const rapidjson::Value* version = member(doc, key::kConvoyVersion);
  if (!version && run) version = member(*run, key::kConvoyVersion);
  if (!doc.IsObject() || !version || !version->IsString()) {
    throw CompareError(folder + " is not a convoy run: its summary.json has no convoy_version");
  }
  Column c;
  c.folder = folder;
  c.name = fs::path(folder).lexically_normal().filename().string();
  if (c.name.empty() || c.name == ".") {
    c.name = fs::path(folder).lexically_normal().parent_path().filename().string();
  }
  if (c.name.empty()) c.name = folder;
  c.metrics = read_metrics(doc);
  if (const rapidjson::Value* yaml = run ? member(*run, key::kConfigYaml) : nullptr;
      yaml && yaml->IsString()) {
    try {
      c.config = flatten_yaml(yaml->GetString());
    } catch (const CompareError& e) {
      throw CompareError(folder + ": " + e.what());
    }
  }
  summary_turns(c);
  read_trial_intervals(doc, c);
  if (const rapidjson::Value* stages = member(doc, key::kStages); stages && stages->IsArray()) {
    size_t i = 0;
    for (const auto& st : stages->GetArray()) {
      if (st.IsObject()) c.stages.push_back(stage_column(folder, st, i));
      ++i;
    }
  }
  return c;
}

namespace {

constexpr size_t kMaxTurnGroups = 32;  // as report.html: turn 31 and later share the last

struct TurnHistograms {
  std::vector<Histogram> turns;  // TTFT in microseconds, by turn group
  void add(size_t turn, double ttft_ms) {
    const size_t g = std::min(turn, kMaxTurnGroups - 1);
    if (turns.size() <= g) turns.resize(g + 1);
    turns[g].record(std::llround(ttft_ms * 1000.0));
  }
  void fill(Column& c) const {
    if (turns.empty()) return;
    c.ttft_by_turn.clear();
    for (size_t g = 0; g < turns.size(); ++g) {
      const Histogram& h = turns[g];
      std::string label = std::to_string(g) + (g + 1 == kMaxTurnGroups ? "+" : "");
      auto ms = [&](double p) {
        return h.empty() ? NAN : static_cast<double>(h.percentile(p)) / 1000.0;
      };
      c.ttft_by_turn.push_back({label, ms(50), ms(90), h.count()});
    }
    c.ttft_by_turn_source = "records.jsonl";
  }
};

bool is_string(const rapidjson::Value* v, const char* text = nullptr) {
  return v && v->IsString() && (!text || std::string(v->GetString()) == text);
}

// records.jsonl's per-request metric keys and the summary tags they are the values of.
constexpr std::pair<const char*, const char*> kRecordSampleKeys[] = {
    {record_key::kTtftMs, tag::kTimeToFirstToken},
    {record_key::kTtstMs, tag::kTimeToSecondToken},
    {record_key::kItlMs, tag::kInterTokenLatency},
    {record_key::kRequestLatencyMs, tag::kRequestLatency},
};

// One column's values from records.jsonl: TTFT by turn and the samples behind the percentiles.
struct RecordSamples {
  TurnHistograms turns;
  std::map<std::string, Histogram> samples;  // by tag, value x kSampleScale

  void add_sample(const char* metric, double value) {
    samples[metric].record(std::llround(value * kSampleScale));
  }
  // A measured record that was sent: schedule lag counts for every one, the latencies only for
  // successes (as in the run's own metrics).
  void add(const rapidjson::Value& metrics, const rapidjson::Value* turn, bool ok) {
    const rapidjson::Value* lag = member(metrics, record_key::kScheduleLagMs);
    if (lag && lag->IsNumber()) add_sample(tag::kScheduleLag, lag->GetDouble());
    if (!ok) return;
    for (const auto& [json_key, metric] : kRecordSampleKeys) {
      const rapidjson::Value* v = member(metrics, json_key);
      if (v && v->IsNumber()) add_sample(metric, v->GetDouble());
    }
    // Per user: 1 / ITL, in tokens per second.
    const rapidjson::Value* itl = member(metrics, record_key::kItlMs);
    if (itl && itl->IsNumber() && itl->GetDouble() > 0) {
      add_sample(tag::kOutputTokenThroughputPerUser, 1000.0 / itl->GetDouble());
    }
    const rapidjson::Value* ttft = member(metrics, record_key::kTtftMs);
    if (ttft && ttft->IsNumber() && turn && turn->IsUint64()) {
      const auto t = static_cast<size_t>(std::min<uint64_t>(turn->GetUint64(), kMaxTurnGroups));
      turns.add(t, ttft->GetDouble());
    }
  }
  void fill(Column& c) {
    turns.fill(c);
    c.samples = std::move(samples);
  }
};

}  // namespace

int64_t add_turns_from_records(std::istream& records, Column& run) {
  RecordSamples whole;
  std::map<std::string, RecordSamples> by_stage;
  int64_t used = 0;
  rapidjson::Document doc;
  for (std::string line; std::getline(records, line);) {
    doc.Parse(line.c_str(), line.size());
    if (doc.HasParseError() || !doc.IsObject()) continue;
    if (!is_string(member(doc, record_key::kPhase), record_key::kPhaseMeasure) ||
        is_string(member(doc, record_key::kSettle)))
      continue;
    const rapidjson::Value* error = member(doc, record_key::kError);
    const rapidjson::Value* close = member(doc, record_key::kCloseRequest);
    const rapidjson::Value* release = member(doc, record_key::kEarlyRelease);
    if ((close && close->IsTrue()) || (release && release->IsTrue())) continue;
    const rapidjson::Value* metrics = member(doc, record_key::kMetrics);
    if (!metrics || !metrics->IsObject()) continue;
    const bool ok = !error || error->IsNull();
    const rapidjson::Value* turn = member(doc, record_key::kTurnIndex);
    whole.add(*metrics, turn, ok);
    if (const rapidjson::Value* stage = member(doc, record_key::kStage); is_string(stage)) {
      by_stage[stage->GetString()].add(*metrics, turn, ok);
    }
    if (ok) ++used;
  }
  whole.fill(run);
  for (Column& st : run.stages) {
    auto it = by_stage.find(st.stage);
    if (it != by_stage.end()) it->second.fill(st);
  }
  return used;
}

namespace {

std::string usage() {
  return "convoy compare needs two or more run folders, or one run with two or more stages "
         "(load.stages, load.sweep or load.search): convoy compare RUN_DIR RUN_DIR... [-o OUT]";
}

// A folder given on the command line, read; CompareError names it when it is not a run.
Column load_run(const std::string& folder) {
  const fs::path dir(folder);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw CompareError(folder + " is not a convoy run: not a folder");
  }
  const fs::path summary = dir / "summary.json";
  std::ifstream in(summary, std::ios::binary);
  if (!fs::is_regular_file(summary, ec) || !in) {
    throw CompareError(folder + " is not a convoy run: no summary.json");
  }
  std::ostringstream text;
  text << in.rdbuf();
  Column c = column_from_summary(folder, text.str());
  std::ifstream records(dir / "records.jsonl", std::ios::binary);
  if (records) add_turns_from_records(records, c);
  return c;
}

// Two runs of the same folder name (a/out and b/out) get "out (2)".
void make_names_unique(std::vector<Column>& columns) {
  for (size_t i = 1; i < columns.size(); ++i) {
    int n = 1;
    const std::string base = columns[i].name;
    auto taken = [&](const std::string& name) {
      return std::any_of(columns.begin(), columns.begin() + static_cast<std::ptrdiff_t>(i),
                         [&](const Column& c) { return c.name == name; });
    };
    while (taken(columns[i].name)) columns[i].name = base + " (" + std::to_string(++n) + ")";
  }
}

}  // namespace

Comparison load_comparison(const std::vector<std::string>& folders) {
  if (folders.empty()) throw CompareError(usage());
  Comparison cmp;
  for (const std::string& f : folders) cmp.columns.push_back(load_run(f));
  if (cmp.columns.size() == 1) {
    Column run = std::move(cmp.columns.front());
    if (run.stages.size() < 2) {
      throw CompareError(folders.front() + " has " + std::to_string(run.stages.size()) +
                         " stage(s); " + usage());
    }
    cmp.stages_mode = true;
    cmp.columns = std::move(run.stages);
  }
  make_names_unique(cmp.columns);
  return cmp;
}

}  // namespace convoy::controller::compare
