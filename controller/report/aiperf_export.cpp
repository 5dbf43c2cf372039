#include "controller/report/aiperf_export.hpp"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "common/build_info.hpp"
#include "common/utf8.hpp"
#include "controller/report/error_summary_json.hpp"

namespace convoy::controller {

namespace {

// A convoy metric tag exported under AIPerf's tag and CSV header. Record metrics (AIPerf's
// MetricType.RECORD) carry the full statistics; the others are aggregates (MetricStats::
// aggregate). Tags and headers: ai-dynamo/aiperf docs/metrics_reference.md and
// src/aiperf/common/models/export_models.py JsonExportData (total_isl / total_osl are AIPerf's
// names for the token totals).
struct AiperfTag {
  const char* convoy;
  const char* aiperf;
  const char* header;
};
constexpr AiperfTag kAiperfTags[] = {
    {"time_to_first_token", "time_to_first_token", "Time to First Token"},
    {"time_to_second_token", "time_to_second_token", "Time to Second Token"},
    {"time_to_first_output_token", "time_to_first_output_token", "Time to First Output Token"},
    {"request_latency", "request_latency", "Request Latency"},
    {"inter_token_latency", "inter_token_latency", "Inter Token Latency"},
    {"inter_chunk_latency", "inter_chunk_latency", "Inter Chunk Latency"},
    {"output_token_throughput_per_user", "output_token_throughput_per_user",
     "Output Token Throughput Per User"},
    {"input_sequence_length", "input_sequence_length", "Input Sequence Length"},
    {"output_sequence_length", "output_sequence_length", "Output Sequence Length"},
    {"reasoning_token_count", "reasoning_token_count", "Reasoning Token Count"},
    {"output_token_throughput", "output_token_throughput", "Output Token Throughput"},
    {"total_token_throughput", "total_token_throughput", "Total Token Throughput"},
    {"request_throughput", "request_throughput", "Request Throughput"},
    {"goodput", "goodput", "Goodput"},
    {"request_count", "request_count", "Request Count"},
    {"good_request_count", "good_request_count", "Good Request Count"},
    {"error_request_count", "error_request_count", "Error Request Count"},
    {"total_input_tokens", "total_isl", "Total Input Sequence Length"},
    {"total_output_tokens", "total_output_tokens", "Total Output Tokens"},
    {"total_reasoning_tokens", "total_reasoning_tokens", "Total Reasoning Tokens"},
    {"benchmark_duration", "benchmark_duration", "Benchmark Duration"},
};

// A metric as exported: AIPerf's tag and header, convoy's statistics.
struct Exported {
  std::string tag;
  std::string header;
  MetricStats stats;
};

// The snapshot's metrics under AIPerf's tags, sorted by tag (as AIPerf's CSV sorts), with
// total_osl (every output token, reasoning included: the sum of output_sequence_length).
std::vector<Exported> exported_metrics(const MetricsSnapshot& s) {
  std::vector<Exported> out;
  for (const MetricStats& m : s.metrics) {
    for (const AiperfTag& t : kAiperfTags) {
      if (m.tag == t.convoy) out.push_back({t.aiperf, t.header, m});
    }
  }
  MetricStats osl;
  osl.tag = "total_osl";
  osl.unit = "tokens";
  osl.avg = static_cast<double>(s.total_output_tokens);
  osl.aggregate = true;
  out.push_back({"total_osl", "Total Output Sequence Length", osl});
  std::sort(out.begin(), out.end(),
            [](const Exported& a, const Exported& b) { return a.tag < b.tag; });
  return out;
}

template <class W>
void put_string(W& w, const char* key, std::string_view v) {
  w.Key(key);
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

template <class W>
void put_number(W& w, const char* key, double v) {
  w.Key(key);
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}

using Pretty = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// JsonMetricResult, field order as declared there; count and sum only on record metrics
// (schema 1.1), nothing but unit and avg on aggregate / derived ones.
void write_metric(Pretty& w, const Exported& e) {
  const MetricStats& m = e.stats;
  w.Key(e.tag.c_str(), static_cast<rapidjson::SizeType>(e.tag.size()));
  w.StartObject();
  put_string(w, "unit", m.unit);
  put_number(w, "avg", m.avg);
  if (!m.aggregate) {
    for (size_t i = 0; i < kReportedPercentiles.size(); ++i) {
      put_number(w, kPercentileKeys[i], m.percentiles[i]);
    }
    put_number(w, "min", m.min);
    put_number(w, "max", m.max);
    put_number(w, "std", m.std);
    w.Key("count");
    w.Int64(m.count);
    put_number(w, "sum", m.sum);
  }
  w.EndObject();
}

// A list of distinct levels as AIPerf's LoadGeneratorConfig takes them: one value as a number,
// several as a list (AIPerf's parameter sweep form, `--concurrency 10,20,30`).
void put_levels(Pretty& w, const char* key, const std::vector<double>& levels, bool integral) {
  if (levels.empty()) return;
  w.Key(key);
  auto one = [&](double v) {
    if (integral) {
      w.Int64(std::llround(v));
    } else {
      w.Double(v);
    }
  };
  if (levels.size() == 1) return one(levels.front());
  w.StartArray();
  for (double v : levels) one(v);
  w.EndArray();
}

// The stages' common value of `field`, when every stage has the same one.
template <class T, class F>
std::optional<T> common_value(const std::vector<StageConfig>& stages, F field) {
  std::optional<T> value;
  for (const StageConfig& st : stages) {
    const std::optional<T> v = field(st);
    if (!v || (value && *value != *v)) return std::nullopt;
    value = v;
  }
  return value;
}

// loadgen of a load profile (stages, sweep or the steps a search ran): the levels each mode
// ran at, in the order run, each once; the per-value end and the cooldown between values where
// every stage has the same.
void write_profile_loadgen(Pretty& w, const std::vector<StageConfig>& stages) {
  std::vector<double> concurrency;
  std::vector<double> rate;
  for (const StageConfig& st : stages) {
    std::vector<double>& levels = st.mode == LoadMode::kRate ? rate : concurrency;
    if (std::find(levels.begin(), levels.end(), st.value) == levels.end()) {
      levels.push_back(st.value);
    }
  }
  put_levels(w, "concurrency", concurrency, true);
  put_levels(w, "request_rate", rate, false);
  const auto requests =
      common_value<int64_t>(stages, [](const StageConfig& s) { return s.requests; });
  if (requests) {
    w.Key("request_count");
    w.Int64(*requests);
  }
  const auto duration =
      common_value<double>(stages, [](const StageConfig& s) { return s.duration_s; });
  if (duration) put_number(w, "benchmark_duration", *duration);
  // The cooldown is between values: a sweep's last step has none.
  const std::vector<StageConfig> between(stages.begin(),
                                         stages.empty() ? stages.end() : stages.end() - 1);
  const auto settle = common_value<double>(
      between, [](const StageConfig& s) { return std::optional<double>(s.settle_s); });
  if (settle && *settle > 0) put_number(w, "parameter_sweep_cooldown_seconds", *settle);
}

// input_config: the parts of AIPerf's UserConfig convoy has (ai-dynamo/aiperf
// aiperf/common/config/endpoint_config.py EndpointConfig: model_names, type, streaming, url,
// timeout_seconds; loadgen_config.py LoadGeneratorConfig: concurrency (a number, or a list for a
// sweep), request_rate, arrival_pattern, request_count, benchmark_duration,
// parameter_sweep_cooldown_seconds). A load profile writes the levels its stages ran at, never
// the unused top-level load.concurrency.
void write_input_config(Pretty& w, const Config& c, std::string_view url,
                        const std::vector<StageConfig>& stages) {
  w.Key("input_config");
  w.StartObject();
  w.Key("endpoint");
  w.StartObject();
  w.Key("model_names");
  w.StartArray();
  w.String(c.target.model.c_str(), static_cast<rapidjson::SizeType>(c.target.model.size()));
  w.EndArray();
  put_string(w, "type", proto::to_string(c.target.endpoint));
  w.Key("streaming");
  w.Bool(c.target.streaming);
  put_string(w, "url", url);
  put_number(w, "timeout_seconds", c.target.request_timeout_s);
  w.EndObject();
  w.Key("loadgen");
  w.StartObject();
  if (c.load.profile != ProfileKind::kSingle) {
    write_profile_loadgen(w, stages);
    w.EndObject();
    w.EndObject();
    return;
  }
  if (c.load.mode == LoadMode::kRate) {
    put_number(w, "request_rate", c.load.rate);
    put_string(w, "arrival_pattern", to_string(c.load.arrival));
  }
  w.Key("concurrency");  // mode rate: the cap on conversations in flight
  w.Int64(c.load.concurrency);
  if (c.load.requests) {
    w.Key("request_count");
    w.Int64(*c.load.requests);
  }
  if (c.load.duration_s) put_number(w, "benchmark_duration", *c.load.duration_s);
  w.EndObject();
  w.EndObject();
}

// run_info (schema 1.2 / 1.3): a single run of no sweep. sweep_id and cli_command are None
// there, which AIPerf's exporter leaves out (model_dump(exclude_none=True)).
void write_run_info(Pretty& w, const Config& c, const std::string& benchmark_id) {
  w.Key("run_info");
  w.StartObject();
  put_string(w, "benchmark_id", benchmark_id);
  w.Key("random_seed");
  w.Uint64(c.seed);
  w.Key("trial");
  w.Int(0);
  put_string(w, "run_label", c.name);
  put_string(w, "variation_label", "base");
  w.Key("variation_index");
  w.Int(0);
  w.Key("variation_values");
  w.StartObject();
  w.EndObject();
  w.EndObject();
}

// AIPerf's CSV number format (metrics_csv_exporter.py _format_number): integers bare, other
// reals with two decimals. Token and request counts are integers there; the rest are floats.
std::string csv_number(double v, bool integral) {
  if (!std::isfinite(v)) return "";
  char buffer[48];
  if (integral && v == std::trunc(v) && std::fabs(v) < 1e15) {
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buffer, sizeof buffer, "%.2f", v);
  }
  return buffer;
}

// "Header (unit)", the unit left out for counts (metrics_csv_exporter.py _format_metric_name).
std::string csv_name(const Exported& e) {
  std::string name = e.header;
  if (!e.stats.unit.empty() && e.stats.unit != "count" && e.stats.unit != "requests") {
    name += " (" + e.stats.unit + ")";
  }
  if (name.find_first_of(",\"") == std::string::npos) return name;
  std::string quoted = "\"";
  for (char c : name) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

}  // namespace

std::string aiperf_profile_json(const MetricsSnapshot& snapshot, const Config& config,
                                const AiperfProvenance& p, std::string_view url,
                                const std::vector<StageConfig>* stages_run) {
  rapidjson::StringBuffer buffer;
  Pretty w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  put_string(w, "schema_version", kAiperfSchemaVersion);
  put_string(w, "aiperf_version", std::string("convoy ") + build_info::version());
  put_string(w, "convoy_version", build_info::version());
  put_string(w, "benchmark_id", p.benchmark_id);
  for (const Exported& e : exported_metrics(snapshot)) write_metric(w, e);
  write_input_config(w, config, url, stages_run ? *stages_run : config.load.stages);
  write_run_info(w, config, p.benchmark_id);
  w.Key("was_cancelled");
  w.Bool(p.was_cancelled);
  write_error_summary_json(w, snapshot.errors, false);
  if (!p.start_time.empty()) put_string(w, "start_time", p.start_time);
  if (!p.end_time.empty()) put_string(w, "end_time", p.end_time);
  w.EndObject();
  std::string out(buffer.GetString(), buffer.GetSize());
  out += '\n';
  sanitize_utf8_in_place(out);
  return out;
}

std::string aiperf_profile_csv(const MetricsSnapshot& snapshot) {
  const std::vector<Exported> metrics = exported_metrics(snapshot);
  std::ostringstream out;
  bool any_record = false;
  for (const Exported& e : metrics) any_record = any_record || !e.stats.aggregate;
  if (any_record) {
    // STAT_KEYS (src/aiperf/common/constants.py): avg, min, max, sum, p1 ... p99, std.
    out << "Metric,avg,min,max,sum";
    for (const char* key : kPercentileKeys) out << ',' << key;
    out << ",std\r\n";
    for (const Exported& e : metrics) {
      if (e.stats.aggregate) continue;
      const MetricStats& m = e.stats;
      const bool integral = m.unit == "tokens";
      out << csv_name(e) << ',' << csv_number(m.avg, false) << ',' << csv_number(m.min, integral)
          << ',' << csv_number(m.max, integral) << ',' << csv_number(m.sum, integral);
      for (double v : m.percentiles) out << ',' << csv_number(v, false);
      out << ',' << csv_number(m.std, false) << "\r\n";
    }
    out << "\r\n";  // the blank line between the sections
  }
  out << "Metric,Value\r\n";
  for (const Exported& e : metrics) {
    if (!e.stats.aggregate) continue;
    const bool integral = e.stats.unit == "tokens" || e.stats.unit == "requests";
    out << csv_name(e) << ',' << csv_number(e.stats.avg, integral) << "\r\n";
  }
  std::string text = out.str();
  sanitize_utf8_in_place(text);
  return text;
}

namespace {

using JsonLine = rapidjson::Writer<rapidjson::StringBuffer>;

void put_wall(JsonLine& w, const char* key, int64_t steady_ns, int64_t offset_ns) {
  w.Key(key);
  if (steady_ns > 0) {
    w.Int64(steady_ns + offset_ns);
  } else {
    w.Null();
  }
}

// MetricValue {value, unit}.
void put_value(JsonLine& w, const char* tag, double value, const char* unit) {
  w.Key(tag);
  w.StartObject();
  w.Key("value");
  w.Double(value);
  w.Key("unit");
  w.String(unit);
  w.EndObject();
}

void put_count(JsonLine& w, const char* tag, int64_t value) {
  w.Key(tag);
  w.StartObject();
  w.Key("value");
  w.Int64(value);
  w.Key("unit");
  w.String("tokens");
  w.EndObject();
}

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// MetricRecordMetadata (aiperf/common/models/record_models.py).
void write_metadata(JsonLine& w, const proto::Record& r, std::string_view worker_id,
                    int64_t offset) {
  w.Key("metadata");
  w.StartObject();
  w.Key("session_num");  // multi-turn: the session's index in the benchmark
  w.Uint64(r.conversation_index);
  put_string(w, "x_request_id", r.x_request_id);
  put_string(w, "x_correlation_id", r.x_correlation_id);
  put_string(w, "conversation_id", r.conversation_id);
  w.Key("turn_index");
  w.Uint(r.turn_index);
  const int64_t start_ns = r.sent_ns > 0 ? r.sent_ns : r.intended_ns;
  put_wall(w, "request_start_ns", start_ns, offset);
  put_wall(w, "request_ack_ns", r.first_byte_ns, offset);
  put_wall(w, "request_end_ns", r.end_ns > 0 ? r.end_ns : start_ns, offset);
  put_string(w, "worker_id", worker_id);
  put_string(w, "record_processor_id", "convoy-controller");
  put_string(w, "benchmark_phase", r.phase == proto::Phase::kWarmup ? "warmup" : "profiling");
  const bool cancelled = r.error.kind == proto::ErrorKind::kCancelled;
  w.Key("was_cancelled");
  w.Bool(cancelled);
  put_wall(w, "cancellation_time_ns", cancelled ? r.end_ns : 0, offset);
  w.EndObject();
}

// The record metrics AIPerf computes per request, in display units.
void write_record_metrics(JsonLine& w, const proto::Record& r, const RequestMetrics& m) {
  w.Key("metrics");
  w.StartObject();
  if (!m.ok) {
    put_count(w, "error_isl", m.isl);
    w.EndObject();
    return;
  }
  put_count(w, "input_sequence_length", m.isl);
  if (m.ttft_ns) put_value(w, "time_to_first_token", ms(*m.ttft_ns), "ms");
  if (m.ttst_ns) put_value(w, "time_to_second_token", ms(*m.ttst_ns), "ms");
  if (m.ttfo_ns) put_value(w, "time_to_first_output_token", ms(*m.ttfo_ns), "ms");
  if (m.request_latency_ns) put_value(w, "request_latency", ms(*m.request_latency_ns), "ms");
  const int64_t reasoning = m.reasoning_tokens.value_or(0);
  put_count(w, "output_token_count", m.osl - reasoning);
  if (reasoning > 0) put_count(w, "reasoning_token_count", reasoning);
  put_count(w, "output_sequence_length", m.osl);
  if (!r.chunk_gaps_ns.empty()) {
    w.Key("inter_chunk_latency");
    w.StartObject();
    w.Key("value");
    w.StartArray();
    for (int64_t gap : r.chunk_gaps_ns) w.Double(ms(gap));
    w.EndArray();
    w.Key("unit");
    w.String("ms");
    w.EndObject();
  }
  if (m.itl_ns) put_value(w, "inter_token_latency", *m.itl_ns / 1e6, "ms");
  if (m.output_tokens_per_s_per_user) {
    put_value(w, "output_token_throughput_per_user", *m.output_tokens_per_s_per_user,
              "tokens/sec/user");
  }
  w.EndObject();
}

// ErrorDetails {code, type, message}; null when the request succeeded.
void write_error(JsonLine& w, const proto::Record& r) {
  w.Key("error");
  if (r.error.kind == proto::ErrorKind::kNone) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("code");
  w.Int64(r.http_status != 0 ? r.http_status : r.error.code);
  put_string(w, "type", r.error.type.empty() ? proto::to_string(r.error.kind) : r.error.type);
  put_string(w, "message", r.error.message);
  w.EndObject();
}

}  // namespace

std::string aiperf_record_line(const proto::Record& r, std::string_view worker_id,
                               int64_t wall_minus_steady_ns) {
  return aiperf_record_line(r, compute_request_metrics(r), worker_id, wall_minus_steady_ns);
}

std::string aiperf_record_line(const proto::Record& r, const RequestMetrics& m,
                               std::string_view worker_id, int64_t wall_minus_steady_ns) {
  rapidjson::StringBuffer buffer;
  JsonLine w(buffer);
  w.StartObject();
  write_metadata(w, r, worker_id, wall_minus_steady_ns);
  write_record_metrics(w, r, m);
  write_error(w, r);
  w.EndObject();
  std::string line(buffer.GetString(), buffer.GetSize());
  sanitize_utf8_in_place(line);
  return line;
}

int64_t wall_minus_steady_ns(std::chrono::system_clock::time_point wall, int64_t steady_ns) {
  const auto wall_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count();
  return static_cast<int64_t>(wall_ns) - steady_ns;
}

AiperfRecordsWriter::AiperfRecordsWriter(const std::filesystem::path& path,
                                         int64_t wall_minus_steady_ns)
    : file_(path, "records", RecordsWriter::kFlushBytes),
      wall_minus_steady_ns_(wall_minus_steady_ns) {}

void AiperfRecordsWriter::write(const proto::Record& record, std::string_view worker_id) {
  write(record, compute_request_metrics(record), worker_id);
}

void AiperfRecordsWriter::write(const proto::Record& record, const RequestMetrics& metrics,
                                std::string_view worker_id) {
  if (proto::session_release_only(record)) return;
  file_.write_line(aiperf_record_line(record, metrics, worker_id, wall_minus_steady_ns_));
}

namespace {

rapidjson::Value json_text(std::string_view text, rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), a);
}

rapidjson::Value chat_message(const char* role, std::string_view content,
                              rapidjson::Document::AllocatorType& a) {
  rapidjson::Value m(rapidjson::kObjectType);
  m.AddMember("role", rapidjson::StringRef(role), a);
  m.AddMember("content", json_text(content, a), a);
  return m;
}

// `json` parsed into a value of `a`; a null value when it is not JSON of `type`.
rapidjson::Value parsed(const std::string& json, rapidjson::Type type,
                        rapidjson::Document::AllocatorType& a) {
  if (json.empty()) return {};
  rapidjson::Document d(&a);
  d.Parse(json.c_str(), json.size());
  if (d.HasParseError() || d.GetType() != type) return {};
  return rapidjson::Value(d, a);
}

// Top-level members of `src` replace or join those of `dst` (the worker's merge, one level).
void merge_top_level(rapidjson::Value& dst, rapidjson::Value& src,
                     rapidjson::Document::AllocatorType& a) {
  if (!src.IsObject()) return;
  for (auto& m : src.GetObject()) {
    auto it = dst.FindMember(m.name);
    if (it != dst.MemberEnd()) {
      it->value = m.value;
    } else {
      dst.AddMember(m.name, m.value, a);
    }
  }
}

}  // namespace

std::string aiperf_turn_payload(const proto::TargetSettings& target,
                                const std::string& system_prompt, const proto::Turn& turn) {
  rapidjson::Document body(rapidjson::kObjectType);
  auto& a = body.GetAllocator();
  body.AddMember("model", json_text(target.model, a), a);
  rapidjson::Value messages = parsed(turn.messages_json, rapidjson::kArrayType, a);
  switch (target.endpoint) {
    case proto::Endpoint::kChat:
    case proto::Endpoint::kResponses:  // input items have chat's roles
    case proto::Endpoint::kMessages: {
      const bool apart = target.endpoint == proto::Endpoint::kMessages;  // "system" of its own
      rapidjson::Value list(rapidjson::kArrayType);
      if (!system_prompt.empty() && !apart) {
        list.PushBack(chat_message("system", system_prompt, a), a);
      }
      if (!system_prompt.empty() && apart) body.AddMember("system", json_text(system_prompt, a), a);
      if (messages.IsArray()) {
        for (auto& m : messages.GetArray()) list.PushBack(m, a);
      } else {
        list.PushBack(chat_message("user", turn.user_text, a), a);
      }
      body.AddMember(rapidjson::StringRef(
                         target.endpoint == proto::Endpoint::kResponses ? "input" : "messages"),
                     list, a);
      break;
    }
    case proto::Endpoint::kCompletions: {
      std::string prompt = system_prompt;
      if (!prompt.empty() && !turn.user_text.empty()) prompt += '\n';
      body.AddMember("prompt", json_text(prompt + turn.user_text, a), a);
      break;
    }
    case proto::Endpoint::kEmbeddings:
      body.AddMember("input", json_text(turn.user_text, a), a);
      break;
  }
  if (target.endpoint != proto::Endpoint::kEmbeddings) {
    if (turn.max_tokens > 0) {
      const bool completion_key =
          target.endpoint == proto::Endpoint::kChat && target.max_completion_tokens;
      const char* key = target.endpoint == proto::Endpoint::kResponses ? "max_output_tokens"
                        : completion_key                               ? "max_completion_tokens"
                                                                       : "max_tokens";
      body.AddMember(rapidjson::StringRef(key), rapidjson::Value(turn.max_tokens), a);
    }
    body.AddMember("stream", rapidjson::Value(target.streaming), a);
    const bool openai_stream = target.endpoint == proto::Endpoint::kChat ||
                               target.endpoint == proto::Endpoint::kCompletions;
    if (target.streaming && target.use_server_token_counts && openai_stream) {
      rapidjson::Value options(rapidjson::kObjectType);
      options.AddMember("include_usage", rapidjson::Value(true), a);
      body.AddMember("stream_options", options, a);
    }
  }
  rapidjson::Value extra = parsed(target.extra_body_json, rapidjson::kObjectType, a);
  merge_top_level(body, extra, a);
  rapidjson::Value turn_extra = parsed(turn.extra_json, rapidjson::kObjectType, a);
  merge_top_level(body, turn_extra, a);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  body.Accept(w);
  std::string out(buffer.GetString(), buffer.GetSize());
  sanitize_utf8_in_place(out);
  return out;
}

AiperfInputsWriter::AiperfInputsWriter(const std::filesystem::path& path,
                                       proto::TargetSettings target)
    : file_(path, "sessions", RecordsWriter::kFlushBytes), target_(std::move(target)) {
  file_.write_line("{\"data\": [");
}

void AiperfInputsWriter::write_session(std::string_view session_id,
                                       const proto::Conversation& conversation) {
  if (closed_) return;
  rapidjson::StringBuffer id;
  rapidjson::Writer<rapidjson::StringBuffer> w(id);
  w.String(session_id.data(), static_cast<rapidjson::SizeType>(session_id.size()));
  std::string line = sessions_ > 0 ? "," : "";
  line += "{\"session_id\": ";
  line.append(id.GetString(), id.GetSize());
  line += ", \"payloads\": [";
  for (size_t i = 0; i < conversation.turns.size(); ++i) {
    if (i > 0) line += ", ";
    line += aiperf_turn_payload(target_, conversation.system_prompt, conversation.turns[i]);
  }
  line += "]}";
  sanitize_utf8_in_place(line);
  file_.write_line(line);
  ++sessions_;
}

void AiperfInputsWriter::close() {
  if (closed_) return;
  closed_ = true;
  file_.write_line("]}");
  file_.close();
}

}  // namespace convoy::controller
