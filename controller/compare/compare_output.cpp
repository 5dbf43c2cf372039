#include "controller/compare/compare_output.hpp"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <sstream>

#include "common/build_info.hpp"
#include "common/utf8.hpp"
#include "controller/report/svg_chart.hpp"

namespace convoy::controller::compare {

namespace {

// ---- console ---------------------------------------------------------------------------------

// Console tables stay within this many columns (a terminal of 120, or a CI log); wider tables
// are split into blocks of columns, each repeating the labels and the baseline.
constexpr size_t kConsoleWidth = 120;
constexpr size_t kMaxCellWidth = 36;  // a longer name or config value is cut, "..." at the end
constexpr size_t kGap = 2;

std::string cut(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

std::string cell(const Row& row, size_t i) {
  if (!row.values[i]) return "-";
  std::string text = chart::number(*row.values[i]);
  if (i == 0 || !row.diff_pct[i]) return text;
  text += " (" + diff_text(row.diff_pct[i]);
  const std::string j = judgement(row, i);
  if (!j.empty()) text += " " + j;
  return text + ")";
}

// A table for the console: `fixed` label cells, then one cell per compared column.
struct ConsoleTable {
  size_t fixed = 1;
  std::vector<std::vector<std::string>> rows;  // the first is the header
};

void print_line(std::ostringstream& out, const std::vector<std::string>& cells,
                const std::vector<size_t>& widths, const std::vector<size_t>& picked) {
  std::string line;
  for (size_t k = 0; k < picked.size(); ++k) {
    const size_t i = picked[k];
    const std::string text = i < cells.size() ? cells[i] : "";
    line += text;
    if (k + 1 < picked.size()) line += std::string(widths[i] - text.size() + kGap, ' ');
  }
  out << line << "\n";
}

// Prints `t` in blocks of columns no wider than kConsoleWidth: the labels and the baseline (the
// first compared column) in every block, then as many of the others as fit.
void print_table(std::ostringstream& out, ConsoleTable t) {
  std::vector<size_t> widths;
  for (auto& r : t.rows) {
    widths.resize(std::max(widths.size(), r.size()), 0);
    for (size_t i = 0; i < r.size(); ++i) {
      if (i >= t.fixed) r[i] = cut(r[i], kMaxCellWidth);
      widths[i] = std::max(widths[i], r[i].size());
    }
  }
  size_t base = 0;
  std::vector<size_t> first;
  for (size_t i = 0; i < std::min(widths.size(), t.fixed + 1); ++i) {
    first.push_back(i);
    base += widths[i] + kGap;
  }
  std::vector<std::vector<size_t>> blocks{first};
  size_t used = base;
  for (size_t i = t.fixed + 1; i < widths.size(); ++i) {
    if (used + widths[i] > kConsoleWidth && blocks.back().size() > first.size()) {
      blocks.push_back(first);
      used = base;
    }
    blocks.back().push_back(i);
    used += widths[i] + kGap;
  }
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0) out << "\n";
    for (const auto& r : t.rows) print_line(out, r, widths, blocks[b]);
  }
}

// The successful requests a column's percentiles are over: its TTFT count (streaming), else
// its request latency count.
std::string samples_cell(const Column& c) {
  for (const char* tag : {summary_tag::kTimeToFirstToken, summary_tag::kRequestLatency}) {
    if (auto n = c.value(tag, summary_key::kCount)) return "n=" + chart::number(*n);
  }
  return "-";
}

// ---- JSON ------------------------------------------------------------------------------------

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void put_string(JsonWriter& w, const char* key, const std::string& v) {
  w.Key(key);
  w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
}

void put_optional(JsonWriter& w, std::optional<double> v) {
  if (v && std::isfinite(*v)) {
    w.Double(*v);
  } else {
    w.Null();
  }
}

void put_number(JsonWriter& w, const char* key, std::optional<double> v) {
  w.Key(key);
  put_optional(w, v);
}

void write_columns(JsonWriter& w, const Comparison& cmp) {
  w.Key("columns");
  w.StartArray();
  for (const Column& c : cmp.columns) {
    w.StartObject();
    put_string(w, "name", c.name);
    put_string(w, "folder", c.folder);
    w.Key("stage");
    if (c.stage.empty()) {
      w.Null();
    } else {
      w.String(c.stage.c_str(), static_cast<rapidjson::SizeType>(c.stage.size()));
    }
    put_number(w, "stage_value", c.stage_value);
    w.EndObject();
  }
  w.EndArray();
}

// A row's noise fields: counts, intervals (95%, [low, high] or null) and, per column after the
// baseline, {method, significant} (null for the baseline and where there is no difference).
void write_noise(JsonWriter& w, const Row& r) {
  w.Key("counts");
  w.StartArray();
  for (const auto& n : r.counts) {
    if (n) {
      w.Int64(*n);
    } else {
      w.Null();
    }
  }
  w.EndArray();
  w.Key("intervals");
  w.StartArray();
  for (const auto& in : r.intervals) {
    if (!in) {
      w.Null();
      continue;
    }
    w.StartArray();
    w.Double(in->low);
    w.Double(in->high);
    w.EndArray();
  }
  w.EndArray();
  w.Key("noise");
  w.StartArray();
  for (const auto& n : r.noise) {
    if (!n) {
      w.Null();
      continue;
    }
    w.StartObject();
    put_string(w, "method", to_string(n->method));
    w.Key("significant");
    w.Bool(n->significant);
    w.EndObject();
  }
  w.EndArray();
}

void write_rows(JsonWriter& w, const std::vector<Row>& rows) {
  w.Key("metrics");
  w.StartArray();
  for (const Row& r : rows) {
    w.StartObject();
    put_string(w, "tag", r.tag);
    put_string(w, "stat", r.stat);
    put_string(w, "name", r.name);
    put_string(w, "unit", r.unit);
    put_string(w, "better", to_string(r.better));
    w.Key("values");
    w.StartArray();
    for (const auto& v : r.values) put_optional(w, v);
    w.EndArray();
    w.Key("diff_pct");
    w.StartArray();
    for (const auto& d : r.diff_pct) put_optional(w, d);
    w.EndArray();
    w.Key("judgement");
    w.StartArray();
    for (size_t i = 0; i < r.diff_pct.size(); ++i) {
      const std::string j = judgement(r, i);
      w.String(j.c_str(), static_cast<rapidjson::SizeType>(j.size()));
    }
    w.EndArray();
    write_noise(w, r);
    w.EndObject();
  }
  w.EndArray();
}

void write_distributions(JsonWriter& w, const Comparison& cmp) {
  w.Key("distributions");
  w.StartObject();
  for (const auto& [tag, title] : kDistributionTags) {
    w.Key(tag);
    w.StartArray();
    for (const Column& c : cmp.columns) {
      w.StartObject();
      put_string(w, "name", c.name);
      auto it = c.metrics.find(tag);
      put_string(w, "unit", it == c.metrics.end() ? "" : it->second.unit);
      put_number(w, "min", c.value(tag, summary_key::kMin));
      for (const PercentileKey& p : kDistributionPercentiles)
        put_number(w, p.key, c.value(tag, p.key));
      put_number(w, "max", c.value(tag, summary_key::kMax));
      put_number(w, "count", c.value(tag, summary_key::kCount));
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void write_curve(JsonWriter& w, const Curve& curve) {
  w.Key("curve");
  w.StartObject();
  put_string(w, "x", curve.x_tag);
  put_string(w, "x_unit", curve.x_unit);
  w.Key("series");
  w.StartArray();
  for (const CurveSeries& s : curve.series) {
    w.StartObject();
    put_string(w, "name", s.name);
    w.Key("points");
    w.StartArray();
    for (const CurvePoint& p : s.points) {
      w.StartObject();
      put_string(w, "name", p.name);
      put_number(w, "x", p.x);
      put_number(w, "ttft_p50_ms", p.ttft_p50_ms);
      put_number(w, "ttft_p99_ms", p.ttft_p99_ms);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void write_turns(JsonWriter& w, const Comparison& cmp) {
  w.Key("ttft_by_turn");
  w.StartArray();
  for (const Column& c : cmp.columns) {
    w.StartObject();
    put_string(w, "name", c.name);
    put_string(w, "source", c.ttft_by_turn_source);
    w.Key("turns");
    w.StartArray();
    for (const TurnGroup& t : c.ttft_by_turn) {
      w.StartObject();
      put_string(w, "turn", t.label);
      put_number(w, "p50_ms", t.p50_ms);
      put_number(w, "p90_ms", t.p90_ms);
      w.Key("count");
      w.Int64(t.count);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void write_config_diffs(JsonWriter& w, const std::vector<ConfigDiff>& diffs) {
  w.Key("config_differences");
  w.StartArray();
  for (const ConfigDiff& d : diffs) {
    w.StartObject();
    put_string(w, "key", d.key);
    w.Key("values");
    w.StartArray();
    for (const auto& v : d.values) {
      if (v) {
        w.String(v->c_str(), static_cast<rapidjson::SizeType>(v->size()));
      } else {
        w.Null();
      }
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string console_table(const Comparison& cmp) {
  std::ostringstream out;
  const std::string what = cmp.stages_mode ? "stage" : "run";
  out << "Comparing " << cmp.columns.size() << " " << what
      << "s; baseline: " << (cmp.columns.empty() ? "" : cmp.columns.front().name)
      << " (the first)\n";
  for (const Column& c : cmp.columns) {
    if (c.name.size() > kMaxCellWidth) out << "  " << c.name << "\n";  // cut in the header
  }
  out << "A difference is better or worse only when larger than the noise: apart 95% intervals "
         "of the\ntrials (load.trials in both) or of the percentile (records.jsonl in both), else "
         "at least "
      << chart::number(kMinRelativeDiffPct) << "%.\nn: the successful requests measured.\n\n";
  ConsoleTable table{2, {}};
  std::vector<std::string> header = {"metric", "unit"};
  std::vector<std::string> samples = {"samples", ""};
  for (const Column& c : cmp.columns) {
    header.push_back(c.name);
    samples.push_back(samples_cell(c));
  }
  table.rows.push_back(header);
  table.rows.push_back(samples);
  for (const Row& r : headline_rows(cmp.columns)) {
    std::vector<std::string> line = {r.name, r.unit};
    for (size_t i = 0; i < r.values.size(); ++i) line.push_back(cell(r, i));
    table.rows.push_back(line);
  }
  print_table(out, table);
  const std::vector<ConfigDiff> diffs = config_differences(cmp.columns);
  if (diffs.empty()) {
    out << "\nConfig: no key differs from the baseline's\n";
  } else {
    out << "\nConfig keys that differ (" << diffs.size() << "):\n";
    ConsoleTable ct{1, {}};
    std::vector<std::string> names = {"  key"};
    for (const Column& c : cmp.columns) names.push_back(c.name);
    ct.rows.push_back(names);
    for (const ConfigDiff& d : diffs) {
      std::vector<std::string> line = {"  " + d.key};
      for (const auto& v : d.values) line.push_back(v ? *v : "(none)");
      ct.rows.push_back(line);
    }
    print_table(out, ct);
  }
  std::string text = out.str();
  sanitize_utf8_in_place(text);
  return text;
}

std::string compare_json(const Comparison& cmp) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  put_string(w, "schema_version", "1.0");
  put_string(w, "convoy_version", build_info::version());
  put_string(w, "mode", cmp.stages_mode ? "stages" : "runs");
  put_string(w, "baseline", cmp.columns.empty() ? "" : cmp.columns.front().name);
  write_columns(w, cmp);
  w.Key("noise");  // how a difference is told from noise (docs/compare.md)
  w.StartObject();
  put_number(w, "confidence", kNoiseConfidence);
  put_number(w, "min_relative_pct", kMinRelativeDiffPct);
  w.EndObject();
  write_rows(w, headline_rows(cmp.columns));
  write_distributions(w, cmp);
  write_curve(w, throughput_latency_curve(cmp.columns, cmp.stages_mode));
  write_turns(w, cmp);
  write_config_diffs(w, config_differences(cmp.columns));
  w.EndObject();
  std::string out(buffer.GetString(), buffer.GetSize());
  out += '\n';
  sanitize_utf8_in_place(out);
  return out;
}

}  // namespace convoy::controller::compare
