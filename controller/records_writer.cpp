#include "controller/records_writer.hpp"

#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "controller/metrics.hpp"

namespace convoy::controller {

namespace {

using LineWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void put_string(LineWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void put_time(LineWriter& w, const char* key, int64_t ns) {
  w.Key(key);
  if (ns > 0) {
    w.Int64(ns);
  } else {
    w.Null();
  }
}

void put_ms(LineWriter& w, const char* key, std::optional<double> ns) {
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

void put_metrics(LineWriter& w, const proto::Record& r) {
  const RequestMetrics m = compute_request_metrics(r);
  w.Key("metrics");
  w.StartObject();
  put_ms(w, "ttft_ms", as_double(m.ttft_ns));
  put_ms(w, "ttst_ms", as_double(m.ttst_ns));
  put_ms(w, "request_latency_ms", as_double(m.request_latency_ns));
  put_ms(w, "itl_ms", m.itl_ns);
  put_ms(w, "schedule_lag_ms", as_double(m.schedule_lag_ns));
  put_ms(w, "corrected_request_latency_ms", as_double(m.corrected_request_latency_ns));
  w.Key("isl");
  w.Int64(m.isl);
  w.Key("osl");
  w.Int64(m.osl);
  w.Key("cached_tokens");
  if (m.cached_tokens) {
    w.Int64(*m.cached_tokens);
  } else {
    w.Null();
  }
  w.EndObject();
}

void put_error(LineWriter& w, const proto::RecordError& e) {
  w.Key("error");
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

// The session_control object as sent, parsed back so readers get an object, not a string.
// Reader -> Writer (SAX, no document) gives the bytes Document::Parse + Accept gave; they go to
// `scratch` first so a payload that turns out not to be JSON leaves no partial output.
void put_session_control(LineWriter& w, const std::string& json, rapidjson::StringBuffer& scratch) {
  w.Key("session_control");
  if (json.empty()) {
    w.Null();
    return;
  }
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

void append_record_json(rapidjson::StringBuffer& out, rapidjson::StringBuffer& scratch,
                        const proto::Record& r, std::string_view worker_id, std::string_view host) {
  LineWriter w(out);
  w.StartObject();
  w.Key("x_request_id");
  put_string(w, r.x_request_id);
  w.Key("x_correlation_id");
  put_string(w, r.x_correlation_id);
  w.Key("conversation_id");
  put_string(w, r.conversation_id);
  w.Key("conversation_index");
  w.Uint64(r.conversation_index);
  w.Key("turn_index");
  w.Uint(r.turn_index);
  w.Key("final_turn");
  w.Bool(r.final_turn);
  w.Key("worker_id");
  put_string(w, worker_id);
  w.Key("host");
  put_string(w, host);
  w.Key("phase");
  w.String(r.phase == proto::Phase::kWarmup ? "warmup" : "measure");
  put_time(w, "intended_ns", r.intended_ns);
  put_time(w, "sent_ns", r.sent_ns);
  put_time(w, "first_byte_ns", r.first_byte_ns);
  put_time(w, "first_token_ns", r.first_token_ns);
  put_time(w, "second_token_ns", r.second_token_ns);
  put_time(w, "last_token_ns", r.last_token_ns);
  put_time(w, "end_ns", r.end_ns);
  put_metrics(w, r);
  w.Key("http_status");
  w.Int64(r.http_status);
  put_error(w, r.error);
  put_session_control(w, r.session_control, scratch);
  w.EndObject();
}

}  // namespace

std::string record_json_line(const proto::Record& r, std::string_view worker_id,
                             std::string_view host) {
  rapidjson::StringBuffer line;
  rapidjson::StringBuffer scratch;
  append_record_json(line, scratch, r, worker_id, host);
  return {line.GetString(), line.GetSize()};
}

RecordsWriter::RecordsWriter(const std::filesystem::path& path)
    : path_(path), file_(std::fopen(path.c_str(), "wb")) {
  if (!file_) throw std::runtime_error("cannot create " + path.string());
}

RecordsWriter::~RecordsWriter() { close(); }

RecordsWriter& RecordsWriter::operator=(RecordsWriter&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    file_ = std::move(other.file_);
    buffer_ = std::move(other.buffer_);
    scratch_ = std::move(other.scratch_);
    lines_ = other.lines_;
    failed_ = other.failed_;
  }
  return *this;
}

void RecordsWriter::write(const proto::Record& record, std::string_view worker_id,
                          std::string_view host) {
  if (!file_) return;
  append_record_json(buffer_, scratch_, record, worker_id, host);
  buffer_.Put('\n');
  ++lines_;
  if (buffer_.GetSize() >= kFlushBytes) flush();
}

void RecordsWriter::flush() {
  if (!file_) return;
  if (buffer_.GetSize() > 0) {
    if (std::fwrite(buffer_.GetString(), 1, buffer_.GetSize(), file_.get()) != buffer_.GetSize()) {
      failed_ = true;
    }
    buffer_.Clear();
  }
  if (std::fflush(file_.get()) != 0) failed_ = true;
}

void RecordsWriter::close() {
  if (!file_) return;
  flush();
  if (std::fclose(file_.release()) != 0) failed_ = true;
}

}  // namespace convoy::controller
