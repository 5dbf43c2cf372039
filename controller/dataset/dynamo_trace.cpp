#include "controller/dataset/dynamo_trace.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "common/log.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/mooncake.hpp"

namespace convoy::controller {

namespace {

constexpr std::string_view kTraceSchema = "dynamo.request.trace.v1";
// A trace's block size (the frontend's trace_block_size) is at most this many tokens.
constexpr int64_t kMaxTraceBlockTokens = 1 << 20;

// One request_end record as the first pass keeps it.
struct TraceRequest {
  uint64_t offset = 0;
  int64_t line = 0;
  int64_t received_ms = 0;  // request.request_received_ms
  int64_t end_ms = 0;       // received + total_time_ms, else the record's event_time_unix_ms
  uint32_t session = 0;     // index into the sessions
};

struct TraceSession {
  std::string id;
  int64_t first_received_ms = 0;
  bool child = false;  // agent_context.parent_session_id was set
};

std::string trace_line(const std::string& source, int64_t line) {
  return source + ":" + std::to_string(line) + ": ";
}

// The input of a request_end record: its length and block hashes, checked.
struct TraceInput {
  int64_t length = 0;
  std::vector<uint64_t> hashes;
  int64_t block_tokens = 0;  // 0: no hashes
};

TraceInput read_input(const Fields& request, const JsonlReader& reader) {
  TraceInput input;
  const std::string why = "a prompt crosses the wire as one string of at most " +
                          describe_bytes(proto::kMaxStringBytes);
  const auto* replay = request.get("replay");
  if (replay == nullptr) {
    const auto tokens = request.integer("input_tokens", 1, kMaxInputLengthTokens, why);
    if (!tokens) {
      request.fail("replay",
                   "is required (or \"input_tokens\"): the request's input length; "
                   "Dynamo writes it when request tracing is on");
    }
    input.length = *tokens;
    return input;
  }
  if (!replay->IsObject()) request.fail("replay", "expected an object");
  const Fields fields(*replay, reader, "request.replay.");
  input.length = *fields.integer("input_length", 1, kMaxInputLengthTokens, why);
  input.hashes = fields.id_list("input_sequence_hashes").value_or(std::vector<uint64_t>{});
  const auto block = fields.integer("trace_block_size", 1, kMaxTraceBlockTokens, "tokens");
  if (!block) fields.fail("trace_block_size", "is required");
  input.block_tokens = *block;
  const auto blocks = static_cast<uint64_t>((input.length + *block - 1) / *block);
  if (!input.hashes.empty() && input.hashes.size() != blocks) {
    fields.fail("input_sequence_hashes", std::to_string(input.hashes.size()) + " hashes for " +
                                             std::to_string(input.length) +
                                             " tokens in blocks of " + std::to_string(*block) +
                                             " (expected " + std::to_string(blocks) + ")");
  }
  return input;
}

// Reads the checked fields of a request_end record; `session` gets its session id ("": none).
TraceRequest read_request(const Fields& record, const JsonlReader& reader, std::string& session,
                          bool& child, TraceInput* input) {
  const auto* value = record.get("request");
  if (value == nullptr || !value->IsObject()) {
    record.fail("request", "a request_end record needs its \"request\" object");
  }
  const Fields request(*value, reader, "request.");
  TraceRequest out;
  out.offset = reader.offset();
  out.line = reader.line();
  const std::string why = "a finite number of milliseconds; Unix-epoch ms fit";
  const auto received =
      request.integer("request_received_ms", 0, static_cast<int64_t>(kMaxTimestampMs), why);
  if (!received) request.fail("request_received_ms", "is required: when the request arrived");
  out.received_ms = *received;
  const auto event =
      record.integer("event_time_unix_ms", 0, static_cast<int64_t>(kMaxTimestampMs), why);
  const auto total = request.number("total_time_ms", 0, kMaxTraceSpanMs, "milliseconds");
  if (total) {
    out.end_ms = out.received_ms + std::llround(*total);
  } else if (event) {
    if (*event < out.received_ms) {
      record.fail("event_time_unix_ms",
                  std::to_string(*event) + " is before request.request_received_ms " +
                      std::to_string(out.received_ms) +
                      ": time goes backwards (the request ended before it arrived)");
    }
    out.end_ms = *event;
  } else {
    out.end_ms = out.received_ms;
  }
  if (!request.string("request_id", true)) request.fail("request_id", "is required");
  if (input != nullptr) *input = read_input(request, reader);
  (void)request.integer("output_tokens", 0);
  session.clear();
  child = false;
  if (const auto* agent = record.get("agent_context")) {
    if (!agent->IsObject()) record.fail("agent_context", "expected an object");
    const Fields context(*agent, reader, "agent_context.");
    session = context.id("session_id").value_or("");
    child = context.id("parent_session_id").has_value();
  }
  if (session.empty()) session = *request.id("request_id");
  return out;
}

// "request_end": a request; the others are not requests. Fails on another schema or event.
bool is_request(const Fields& record) {
  const auto schema = record.string("schema", true);
  if (!schema || *schema != kTraceSchema) {
    record.fail("schema", (schema ? "\"" + *schema + "\"" : std::string("missing")) +
                              ": expected \"" + std::string(kTraceSchema) +
                              "\" (a Dynamo request trace record)");
  }
  const auto event = record.string("event_type", true);
  if (!event) record.fail("event_type", "is required");
  if (*event == "request_end") return true;
  if (*event == "tool_start" || *event == "tool_end" || *event == "tool_error" ||
      *event == "request_payload") {
    return false;
  }
  record.fail("event_type", "\"" + *event +
                                "\" is not one of request_end, tool_start, tool_end, tool_error, "
                                "request_payload");
}

// One Mooncake row: the session's first request carries its timestamp, a later one its delay.
std::string mooncake_row(const std::string& session, const TraceInput& input,
                         std::optional<int64_t> output_tokens, bool first, int64_t time_ms) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("session_id");
  w.String(session.c_str(), static_cast<rapidjson::SizeType>(session.size()));
  w.Key(first ? "timestamp" : "delay");
  w.Int64(time_ms);
  w.Key("input_length");
  w.Int64(input.length);
  if (!input.hashes.empty()) {
    w.Key("hash_ids");
    w.StartArray();
    for (const uint64_t h : input.hashes) w.Uint64(h);
    w.EndArray();
  }
  if (output_tokens) {
    w.Key("output_length");
    w.Int64(std::max<int64_t>(1, *output_tokens));  // a request that generated nothing: 1
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace

namespace {

// The first pass: every record checked, the requests and their sessions kept.
DynamoTraceStats collect_requests(std::istream& in, const std::string& source,
                                  std::vector<TraceRequest>& requests,
                                  std::vector<TraceSession>& sessions) {
  DynamoTraceStats stats;
  std::unordered_map<std::string, uint32_t> session_index;
  int64_t block_line = 0;
  JsonlReader reader(in, source);
  rapidjson::Document row;
  std::string session;
  bool child = false;
  TraceInput input;
  while (reader.next(row)) {
    const Fields record(row, reader);
    if (!is_request(record)) {
      ++stats.other_records;
      continue;
    }
    TraceRequest request = read_request(record, reader, session, child, &input);
    if (input.block_tokens != 0 && !input.hashes.empty()) {
      if (stats.block_tokens != 0 && stats.block_tokens != input.block_tokens) {
        throw ConfigError(trace_line(source, reader.line()) +
                          "request.replay.trace_block_size: " + std::to_string(input.block_tokens) +
                          " differs from the " + std::to_string(stats.block_tokens) + " of line " +
                          std::to_string(block_line) + ": a trace has one block size");
      }
      stats.block_tokens = input.block_tokens;
      block_line = reader.line();
    }
    const auto [it, added] = session_index.emplace(session, static_cast<uint32_t>(sessions.size()));
    if (added) sessions.push_back({session, request.received_ms, child});
    TraceSession& s = sessions[it->second];
    s.first_received_ms = std::min(s.first_received_ms, request.received_ms);
    s.child = s.child || child;
    request.session = it->second;
    requests.push_back(request);
  }
  if (requests.empty()) throw ConfigError(source + ": the trace has no request_end records");
  stats.requests = requests.size();
  stats.sessions = sessions.size();
  for (const auto& s : sessions) stats.child_sessions += s.child ? 1 : 0;
  if (stats.block_tokens == 0) stats.block_tokens = kMooncakeBlockTokens;
  return stats;
}

// The second pass: each request read back by its offset and written as a Mooncake row.
DynamoTraceStats map_dynamo_trace_rows(std::istream& in, const std::string& source,
                                       const RowSource& rows, std::ostream& out) {
  std::vector<TraceRequest> requests;
  std::vector<TraceSession> sessions;
  const DynamoTraceStats stats = collect_requests(in, source, requests, sessions);
  // Sessions by their first receipt (file order on ties), requests by receipt within each.
  std::stable_sort(requests.begin(), requests.end(),
                   [&](const TraceRequest& a, const TraceRequest& b) {
                     const TraceSession& sa = sessions[a.session];
                     const TraceSession& sb = sessions[b.session];
                     if (sa.first_received_ms != sb.first_received_ms) {
                       return sa.first_received_ms < sb.first_received_ms;
                     }
                     if (a.session != b.session) return a.session < b.session;
                     return a.received_ms < b.received_ms;
                   });
  std::string session;
  bool child = false;
  TraceInput input;
  for (size_t i = 0; i < requests.size(); ++i) {
    const TraceRequest& r = requests[i];
    const JsonlReader reader(source, r.offset);
    rapidjson::Document row;
    reader.parse_back(rows.line_at(r.offset), row);
    const Fields record(row, reader);
    (void)read_request(record, reader, session, child, &input);
    const Fields request(row["request"], reader, "request.");
    const auto output = request.integer("output_tokens", 0);
    const bool first = i == 0 || requests[i - 1].session != r.session;
    int64_t time_ms = r.received_ms;
    if (!first) {
      // Think time: from the previous request's end to this one's receipt (tool calls and the
      // agent's own work); overlapping requests of one session are sent back to back.
      time_ms = std::max<int64_t>(0, r.received_ms - requests[i - 1].end_ms);
      if (static_cast<double>(time_ms) > kMaxDelayMs) {
        throw ConfigError(trace_line(source, r.line) +
                          "request.request_received_ms: " + std::to_string(time_ms) +
                          " ms after the end of the session's previous request (line " +
                          std::to_string(requests[i - 1].line) +
                          "), more than a think time may be (1e9 ms, about 11.6 days)");
      }
    }
    out << mooncake_row(sessions[r.session].id, input, output, first, time_ms);
  }
  return stats;
}

// A file removed when this goes out of scope (an open reader keeps its bytes readable).
struct TempFile {
  std::string path;
  ~TempFile() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove(path, ec);
  }
};

std::string describe(const DynamoTraceStats& s) {
  return std::to_string(s.requests) + " request_end records in " + std::to_string(s.sessions) +
         " sessions (" + std::to_string(s.child_sessions) +
         " with a parent session, replayed on their own), " + std::to_string(s.other_records) +
         " other records skipped, blocks of " + std::to_string(s.block_tokens) + " tokens";
}

}  // namespace

std::unique_ptr<Dataset> open_dynamo_trace(const std::string& path, const Config& config,
                                           const Corpus& corpus) {
  auto rows = open_row_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path");
  TempFile mapped;
  std::string name = (std::filesystem::temp_directory_path() / "convoy-dynamo-XXXXXX").string();
  const int fd = mkstemp(name.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for " + path);
  ::close(fd);
  mapped.path = name;
  DynamoTraceStats stats;
  {
    std::ofstream out(mapped.path, std::ios::binary | std::ios::trunc);
    stats = map_dynamo_trace_rows(in, path, *rows, out);
    out.flush();
    if (!out) throw std::runtime_error("cannot write the temporary file " + mapped.path);
  }
  log_info("dataset ", path, ": ", describe(stats));
  auto mooncake_rows = open_row_file(mapped.path);
  std::ifstream again(mapped.path, std::ios::binary);
  return index_mooncake_trace(again, path + " (as Mooncake rows)", std::move(mooncake_rows), config,
                              corpus, stats.block_tokens);
}

DynamoTraceStats map_dynamo_trace(std::istream& in, const std::string& source, std::ostream& out) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream again(text);
  const auto rows = row_text(text);
  return map_dynamo_trace_rows(again, source, *rows, out);
}

std::vector<proto::Conversation> parse_dynamo_trace(std::istream& in, const std::string& source,
                                                    const Config& config, const Corpus& corpus) {
  std::ostringstream mapped;
  const DynamoTraceStats stats = map_dynamo_trace(in, source, mapped);
  std::istringstream rows_in(mapped.str());
  return materialize(*index_mooncake_trace(rows_in, source + " (as Mooncake rows)",
                                           row_text(mapped.str()), config, corpus,
                                           stats.block_tokens));
}

}  // namespace convoy::controller
