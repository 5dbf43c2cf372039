#include "controller/dataset/dynamo_trace.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "common/log.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/mooncake.hpp"
#include "controller/dataset/trace_rows.hpp"

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
  std::string parent;  // agent_context.parent_session_id ("": a lead)
  int64_t line = 0;    // its first record
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
                          std::string& parent, TraceInput* input) {
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
  parent.clear();
  if (const auto* agent = record.get("agent_context")) {
    if (!agent->IsObject()) record.fail("agent_context", "expected an object");
    const Fields context(*agent, reader, "agent_context.");
    session = context.id("session_id").value_or("");
    parent = context.id("parent_session_id").value_or("");
  }
  if (session.empty()) session = *request.id("request_id");
  if (parent == session) parent.clear();  // a session is not its own sub-agent
  return out;
}

// The record a line holds: the line itself, or the "event" of the envelope Dynamo's file sink
// writes around each record ({"timestamp": ms since the sink started, "event": {record}}).
const rapidjson::Value& record_of(const rapidjson::Document& row, const JsonlReader& reader) {
  if (row.HasMember("schema")) return row;
  const auto event = row.FindMember("event");
  if (event == row.MemberEnd()) return row;
  if (!event->value.IsObject()) {
    reader.fail("event: expected an object (the record inside the file sink's envelope)");
  }
  return event->value;
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
  std::string parent;
  TraceInput input;
  while (reader.next(row)) {
    const Fields record(record_of(row, reader), reader);
    if (!is_request(record)) {
      ++stats.other_records;
      continue;
    }
    TraceRequest request = read_request(record, reader, session, parent, &input);
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
    if (added) sessions.push_back({session, request.received_ms, parent, reader.line()});
    TraceSession& s = sessions[it->second];
    s.first_received_ms = std::min(s.first_received_ms, request.received_ms);
    if (s.parent.empty()) s.parent = parent;
    request.session = it->second;
    requests.push_back(request);
  }
  if (requests.empty()) throw ConfigError(source + ": the trace has no request_end records");
  stats.requests = requests.size();
  stats.sessions = sessions.size();
  for (const auto& s : sessions) stats.child_sessions += s.parent.empty() ? 0 : 1;
  if (stats.block_tokens == 0) stats.block_tokens = kMooncakeBlockTokens;
  return stats;
}

// The turn of its parent after which a child session starts: the parent's requests that had
// ended when the child's first request arrived (else those received before it); 0 when the
// parent sent none before the child, or is not in the trace: the child then runs on its own.
// `parent` is the parent session's requests in `requests` (sorted by receipt).
uint32_t spawn_turn(const TraceSession& child, const std::vector<TraceRequest>& requests,
                    std::pair<size_t, size_t> parent) {
  const int64_t t = child.first_received_ms;
  uint32_t ended = 0;
  uint32_t received = 0;
  for (size_t i = parent.first; i < parent.second; ++i) {
    if (requests[i].received_ms >= t) break;
    ++received;
    if (requests[i].end_ms <= t) ended = received;
  }
  return ended > 0 ? ended : received;
}

// Each session's requests in `requests`, sorted by session first receipt then receipt.
std::vector<std::pair<size_t, size_t>> session_ranges(const std::vector<TraceRequest>& requests,
                                                      size_t sessions) {
  std::vector<std::pair<size_t, size_t>> ranges(sessions, {0, 0});
  for (size_t i = 0; i < requests.size(); ++i) {
    auto& range = ranges[requests[i].session];
    if (i == 0 || requests[i - 1].session != requests[i].session) range.first = i;
    range.second = i + 1;
  }
  return ranges;
}

// Sub-agents: for every session naming a parent in the trace, the parent's session index and
// the turn it starts after (0: runs on its own).
std::vector<std::pair<uint32_t, uint32_t>> spawn_points(
    const std::vector<TraceRequest>& requests, const std::vector<TraceSession>& sessions,
    const std::vector<std::pair<size_t, size_t>>& ranges) {
  std::unordered_map<std::string, uint32_t> index_of;
  for (size_t i = 0; i < sessions.size(); ++i) {
    index_of.emplace(sessions[i].id, static_cast<uint32_t>(i));
  }
  std::vector<std::pair<uint32_t, uint32_t>> spawns(sessions.size(), {0, 0});
  for (size_t i = 0; i < sessions.size(); ++i) {
    const auto parent = index_of.find(sessions[i].parent);
    if (sessions[i].parent.empty() || parent == index_of.end()) continue;
    spawns[i] = {parent->second, spawn_turn(sessions[i], requests, ranges[parent->second])};
  }
  return spawns;
}

// The second pass: each request read back by its offset and written as a Mooncake row.
DynamoTraceStats map_dynamo_trace_rows(std::istream& in, const std::string& source,
                                       const RowSource& rows, std::ostream& out) {
  std::vector<TraceRequest> requests;
  std::vector<TraceSession> sessions;
  DynamoTraceStats stats = collect_requests(in, source, requests, sessions);
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
  const auto spawns = spawn_points(requests, sessions, session_ranges(requests, sessions.size()));
  std::string session;
  std::string parent;
  TraceInput input;
  TraceRow previous;
  for (size_t i = 0; i < requests.size(); ++i) {
    const TraceRequest& r = requests[i];
    const JsonlReader reader(source, r.offset);
    rapidjson::Document row;
    reader.parse_back(rows.line_at(r.offset), row);
    const rapidjson::Value& value = record_of(row, reader);
    const Fields record(value, reader);
    (void)read_request(record, reader, session, parent, &input);
    const Fields request(value["request"], reader, "request.");
    TraceRow mapped;
    mapped.session = sessions[r.session].id;
    mapped.first = i == 0 || requests[i - 1].session != r.session;
    mapped.output_length = request.integer("output_tokens", 0);
    mapped.input_length = input.length;
    mapped.hash_ids = std::move(input.hashes);
    mapped.time_ms = static_cast<double>(r.received_ms);
    if (mapped.first && spawns[r.session].second > 0) {
      mapped.parent_session = sessions[spawns[r.session].first].id;
      mapped.spawn_after_turn = spawns[r.session].second;
      ++stats.subagent_sessions;
    } else if (!mapped.first) {
      // Think time: from the previous request's end to this one's receipt (tool calls and the
      // agent's own work); overlapping requests of one session are sent back to back.
      const int64_t gap = std::max<int64_t>(0, r.received_ms - requests[i - 1].end_ms);
      if (static_cast<double>(gap) > kMaxDelayMs) {
        throw ConfigError(trace_line(source, r.line) +
                          "request.request_received_ms: " + std::to_string(gap) +
                          " ms after the end of the session's previous request (line " +
                          std::to_string(requests[i - 1].line) +
                          "), more than a think time may be (1e9 ms, about 11.6 days)");
      }
      mapped.time_ms = static_cast<double>(gap);
      // The request carried the session's whole context; convoy sends the history itself.
      const NewInput added =
          new_input_tokens(input.length, previous.input_length, previous.output_length.value_or(0));
      stats.not_extending += added.extends ? 0 : 1;
      mapped.input_length = added.tokens;
      mapped.hash_ids.clear();
    }
    out << mooncake_row_json(mapped);
    previous.input_length = input.length;  // the whole context, not what was sent
    previous.output_length = mapped.output_length;
  }
  return stats;
}

std::string describe(const DynamoTraceStats& s) {
  return std::to_string(s.requests) + " request_end records in " + std::to_string(s.sessions) +
         " sessions (" + std::to_string(s.child_sessions) + " with a parent session, " +
         std::to_string(s.subagent_sessions) + " of them replayed as sub-agents), " +
         std::to_string(s.not_extending) +
         " requests that did not extend their session's context (sent as 1 new token), " +
         std::to_string(s.other_records) + " other records skipped, blocks of " +
         std::to_string(s.block_tokens) + " tokens";
}

}  // namespace

std::unique_ptr<Dataset> open_dynamo_trace(const std::string& path, const Config& config,
                                           const Corpus& corpus) {
  const TraceText text(path);
  auto rows = open_row_file(text.plain_path());
  std::ifstream in(text.plain_path(), std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path");
  try {
    return index_trace_rows(
        path,
        [&](std::ostream& out) {
          const DynamoTraceStats stats = map_dynamo_trace_rows(in, path, *rows, out);
          log_info("dataset ", path, ": ", describe(stats));
          return stats.block_tokens;
        },
        config, corpus);
  } catch (const ConfigError& e) {
    throw ConfigError(text.locate(e.what()));
  }
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
