#include "controller/report/records_writer.hpp"

#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "common/utf8.hpp"
#include "controller/config/target_models.hpp"
#include "controller/report/json_line_writer.hpp"
#include "controller/report/metrics.hpp"
#include "controller/report/record_keys.hpp"
#include "controller/report/server_timing.hpp"

namespace convoy::controller {

namespace {

// Strings and keys through the fast path (json_line_writer.hpp); the same bytes as rapidjson.
using LineWriter = JsonLineWriter;

void put_string(LineWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void put_time(LineWriter& w, std::string_view key, int64_t ns) {
  w.PlainKey(key);
  if (ns > 0) {
    w.Int64(ns);
  } else {
    w.Null();
  }
}

template <size_t N>
void put_ms(LineWriter& w, const char (&key)[N], std::optional<double> ns) {
  w.Key(key);
  if (ns && std::isfinite(*ns)) {
    w.Double(*ns / 1e6);
  } else {
    w.Null();
  }
}

std::optional<double> as_double(const std::optional<int64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

void put_metrics(LineWriter& w, const RequestMetrics& m) {
  w.Key(record_key::kMetrics);
  w.StartObject();
  put_ms(w, record_key::kTtftMs, as_double(m.ttft_ns));
  put_ms(w, record_key::kTtstMs, as_double(m.ttst_ns));
  put_ms(w, record_key::kRequestLatencyMs, as_double(m.request_latency_ns));
  put_ms(w, record_key::kItlMs, m.itl_ns);
  put_ms(w, record_key::kScheduleLagMs, as_double(m.schedule_lag_ns));
  put_ms(w, record_key::kCorrectedRequestLatencyMs, as_double(m.corrected_request_latency_ns));
  w.Key(record_key::kIsl);
  w.Int64(m.isl);
  w.Key(record_key::kOsl);
  w.Int64(m.osl);
  w.Key(record_key::kReasoningTokens);  // the reasoning part of osl (0: none)
  w.Int64(m.reasoning_tokens.value_or(0));
  w.Key(record_key::kCachedTokens);
  if (m.cached_tokens) {
    w.Int64(*m.cached_tokens);
  } else {
    w.Null();
  }
  w.EndObject();
}

void put_error(LineWriter& w, const proto::RecordError& e) {
  w.Key(record_key::kError);
  if (e.kind == proto::ErrorKind::kNone) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("kind");
  put_string(w, proto::to_string(e.kind));
  w.Key("code");
  w.Int64(e.code);
  w.Key("type");
  put_string(w, e.type);
  w.Key("message");
  put_string(w, e.message);
  w.EndObject();
}

// A value given as JSON text (a session_control key the body already had), written as JSON.
// Reader -> Writer (SAX, no document) checks and copies it into `scratch` first, so a payload
// that turns out not to be JSON is written as a string and leaves no partial output.
void put_raw_json(LineWriter& w, const std::string& json, rapidjson::StringBuffer& scratch) {
  scratch.Clear();
  rapidjson::Writer<rapidjson::StringBuffer> copy(scratch);
  rapidjson::MemoryStream memory(json.data(), json.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(memory);
  rapidjson::Reader reader;
  if (!reader.Parse(in, copy) || !copy.IsComplete()) {
    put_string(w, json);
    return;
  }
  rapidjson::Type type = rapidjson::kObjectType;
  switch (scratch.GetString()[0]) {
    case '{':
      type = rapidjson::kObjectType;
      break;
    case '[':
      type = rapidjson::kArrayType;
      break;
    case '"':
      type = rapidjson::kStringType;
      break;
    case 't':
      type = rapidjson::kTrueType;
      break;
    case 'f':
      type = rapidjson::kFalseType;
      break;
    case 'n':
      type = rapidjson::kNullType;
      break;
    default:
      type = rapidjson::kNumberType;
      break;
  }
  w.RawValue(scratch.GetString(), scratch.GetSize(), type);
}

// The session_control object as the request carried it: convoy's keys, then the body's own.
void put_session_control(LineWriter& w, const proto::SessionControl& c,
                         rapidjson::StringBuffer& scratch) {
  w.Key(record_key::kSessionControl);
  if (!c.present()) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("session_id");
  put_string(w, c.session_id);
  if (c.action != proto::SessionAction::kBare) {
    w.Key("action");
    put_string(w, proto::to_string(c.action));
  }
  if (c.timeout_s > 0) {
    w.Key("timeout");
    w.Int64(c.timeout_s);
  }
  for (const auto& [key, value] : c.other_keys) {
    w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    put_raw_json(w, value, scratch);
  }
  w.EndObject();
}

// target.server_timing: the server's own timing (nvext.timing) and the client-minus-server gaps,
// in ms; null when the server reported none.
template <class Writer>
void put_server_timing(Writer& w, const proto::Record& r, const RequestMetrics& m) {
  w.Key(record_key::kServerTiming);
  const std::optional<RequestServerTiming> t = request_server_timing(r, m);
  if (!t) {
    w.Null();
    return;
  }
  const auto put = [&w](std::string_view key, const std::optional<double>& v) {
    w.PlainKey(key);
    if (v) {
      w.Double(*v);
    } else {
      w.Null();
    }
  };
  w.StartObject();
  put("queue_ms", t->queue_ms);
  put("prefill_ms", t->prefill_ms);
  put("ttft_ms", t->ttft_ms);
  put("itl_ms", t->itl_ms);
  put("total_ms", t->total_ms);
  put("ttft_gap_ms", t->ttft_gap_ms);
  put("latency_gap_ms", t->latency_gap_ms);
  w.EndObject();
}

void append_record_json_raw(rapidjson::StringBuffer& out, rapidjson::StringBuffer& scratch,
                            const proto::Record& r, const RequestMetrics& m,
                            std::string_view worker_id, std::string_view host,
                            std::string_view stage, bool settle, std::string_view model) {
  LineWriter w(out);
  w.StartObject();
  w.Key(record_key::kXRequestId);
  put_string(w, r.x_request_id);
  w.Key(record_key::kXCorrelationId);
  put_string(w, r.x_correlation_id);
  w.Key(record_key::kConversationId);
  put_string(w, r.conversation_id);
  w.Key(record_key::kConversationIndex);
  w.Uint64(r.conversation_index);
  w.Key(record_key::kTurnIndex);
  w.Uint(r.turn_index);
  w.Key(record_key::kFinalTurn);
  w.Bool(r.final_turn);
  w.Key(record_key::kWorkerId);
  put_string(w, worker_id);
  w.Key(record_key::kHost);
  put_string(w, host);
  w.Key(record_key::kPhase);
  w.String(r.phase == proto::Phase::kWarmup ? record_key::kPhaseWarmup : record_key::kPhaseMeasure);
  if (!stage.empty()) {
    if (settle) {
      w.Key(record_key::kSettle);
    } else {
      w.Key(record_key::kStage);
    }
    put_string(w, stage);
  }
  for (const auto& [name, field] : proto::kRecordTimestamps) put_time(w, name, r.*field);
  put_metrics(w, m);
  w.Key(record_key::kHttpStatus);
  w.Int64(r.http_status);
  put_error(w, r.error);
  put_session_control(w, r.session_control, scratch);
  // Sub-agent families and several frontends: the family position, the frontend (its index in
  // target.urls), the serving worker.
  w.Key(record_key::kSubagent);  // -1: the lead (or a conversation without sub-agents)
  w.Int(r.subagent);
  w.Key(record_key::kUrlIndex);
  w.Uint(r.url_index);
  if (!model.empty()) {  // target.models: the conversation's model
    w.Key(record_key::kModel);
    put_string(w, model);
  }
  w.Key(record_key::kServedBy);  // session_routing.verify: the worker the server named; null: none
  if (r.served_by.empty()) {
    w.Null();
  } else {
    put_string(w, r.served_by);
  }
  w.Key(record_key::kDpRank);
  if (r.dp_rank >= 0) {
    w.Int64(r.dp_rank);
  } else {
    w.Null();
  }
  put_server_timing(w, r, m);
  w.Key(record_key::kTenant);  // dataset.tenants: the conversation's; null: none
  if (r.tenant.empty()) {
    w.Null();
  } else {
    put_string(w, r.tenant);
  }
  w.Key(record_key::kPriority);  // dataset.agent_hints.priority: the conversation's; null: none
  if (r.priority != proto::kNoPriority) {
    w.Int64(r.priority);
  } else {
    w.Null();
  }
  w.Key(record_key::kCloseRequest);  // final_marker close_request's extra request: in no metric
  w.Bool(r.close_request);
  w.Key(record_key::kEarlyRelease);  // a session released after its conversation ended early: in no
                                     // metric
  w.Bool(r.early_release);
  w.EndObject();
}

// Server-supplied text (error messages and types, bodies quoted in them) is any bytes; the line
// is checked once as a whole and its bad bytes replaced, which never touches JSON's ASCII
// structure (see common/utf8.hpp).
void make_valid_utf8(rapidjson::StringBuffer& out, size_t from) {
  const std::string_view line(out.GetString() + from, out.GetSize() - from);
  if (is_valid_utf8(line)) return;
  const std::string clean = sanitize_utf8(line);
  out.Pop(line.size());
  std::copy(clean.begin(), clean.end(), out.Push(clean.size()));
}

void append_record_json(rapidjson::StringBuffer& out, rapidjson::StringBuffer& scratch,
                        const proto::Record& r, const RequestMetrics& m, std::string_view worker_id,
                        std::string_view host, std::string_view stage, bool settle,
                        std::string_view model = {}) {
  const size_t from = out.GetSize();
  append_record_json_raw(out, scratch, r, m, worker_id, host, stage, settle, model);
  make_valid_utf8(out, from);
}

}  // namespace

std::string record_json_line(const proto::Record& r, std::string_view worker_id,
                             std::string_view host, std::string_view stage, bool settle) {
  rapidjson::StringBuffer line;
  rapidjson::StringBuffer scratch;
  append_record_json(line, scratch, r, compute_request_metrics(r), worker_id, host, stage, settle);
  return {line.GetString(), line.GetSize()};
}

RecordsWriter::RecordsWriter(const std::filesystem::path& path)
    : file_(path, "records", kFlushBytes) {}

void RecordsWriter::set_models(std::vector<proto::ModelWeight> models, uint64_t seed) {
  models_ = std::move(models);
  seed_ = seed;
}

void RecordsWriter::write(const proto::Record& record, std::string_view worker_id,
                          std::string_view host, std::string_view stage, bool settle) {
  write(record, compute_request_metrics(record), worker_id, host, stage, settle);
}

void RecordsWriter::write(const proto::Record& record, const RequestMetrics& metrics,
                          std::string_view worker_id, std::string_view host, std::string_view stage,
                          bool settle) {
  file_.append_line([&](rapidjson::StringBuffer& out) {
    const std::string_view model =
        models_.empty()
            ? std::string_view{}
            : std::string_view(
                  models_[model_index_for(models_, seed_, record.conversation_index)].name);
    append_record_json(out, scratch_, record, metrics, worker_id, host, stage, settle, model);
  });
}

}  // namespace convoy::controller
