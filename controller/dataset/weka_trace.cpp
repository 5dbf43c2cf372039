#include "controller/dataset/weka_trace.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "common/log.hpp"
#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/mooncake.hpp"
#include "controller/dataset/trace_rows.hpp"

namespace convoy::controller {

namespace {

// AIPerf's rule: an inner call's t more than this below its marker's t is relative to the marker.
constexpr double kWekaRelativeEpsilonS = 1e-6;
constexpr int64_t kMaxWekaBlockTokens = 1 << 20;  // tokens per hash block, at most
constexpr double kMaxWekaSeconds = 1e9;           // a call's t, at most (about 31 years)

// One JSON object of a trace and where it lies: errors name the file and the key path.
class WekaObject {
 public:
  WekaObject(const rapidjson::Value& value, const std::string& source, std::string prefix)
      : value_(value), source_(source), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    throw ConfigError(source_ + ": " + prefix_ + std::string(key) + ": " + what);
  }
  const std::string& prefix() const { return prefix_; }

  const rapidjson::Value* get(std::string_view key) const {
    const auto it = value_.FindMember(
        rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
    return it == value_.MemberEnd() ? nullptr : &it->value;
  }

  // Unknown keys are errors, as AIPerf's models forbid extra fields.
  void only_keys(std::initializer_list<std::string_view> keys, const char* what) const {
    for (auto it = value_.MemberBegin(); it != value_.MemberEnd(); ++it) {
      const std::string_view name(it->name.GetString(), it->name.GetStringLength());
      if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
        std::string known;
        for (const auto k : keys) known += (known.empty() ? "" : ", ") + std::string(k);
        fail(name, std::string("unknown key in ") + what + " (known: " + known + ")");
      }
    }
  }

  std::string string(std::string_view key, bool required) const {
    const auto* v = get(key);
    if (v == nullptr) {
      if (required) fail(key, "is required");
      return {};
    }
    if (!v->IsString()) fail(key, "expected a string");
    if (required && v->GetStringLength() == 0) fail(key, "must not be empty");
    return std::string(v->GetString(), v->GetStringLength());
  }

  // A number (seconds); null counts as absent, as in AIPerf's optional fields.
  std::optional<double> number(std::string_view key, bool required, double min) const {
    const auto* v = get(key);
    if (v == nullptr || (v->IsNull() && !required)) {
      if (required) fail(key, "is required");
      return std::nullopt;
    }
    if (!v->IsNumber()) fail(key, "expected a number of seconds");
    const double x = v->GetDouble();
    if (!(x >= min) || x > kMaxWekaSeconds) {
      std::ostringstream s;
      s << x << " is out of range (" << min << " .. " << kMaxWekaSeconds << ")";
      fail(key, s.str());
    }
    return x;
  }

  std::optional<int64_t> integer(std::string_view key, bool required, int64_t min,
                                 int64_t max) const {
    const auto* v = get(key);
    if (v == nullptr || (v->IsNull() && !required)) {
      if (required) fail(key, "is required");
      return std::nullopt;
    }
    if (!v->IsInt64()) fail(key, "expected an integer");
    const int64_t x = v->GetInt64();
    if (x < min || x > max) {
      fail(key, std::to_string(x) + " is out of range (" + std::to_string(min) + " .. " +
                    std::to_string(max) + ")");
    }
    return x;
  }

  void strings(std::string_view key, bool required) const {
    const auto* v = get(key);
    if (v == nullptr) {
      if (required) fail(key, "is required (a list of strings)");
      return;
    }
    if (!v->IsArray()) fail(key, "expected a list of strings");
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      if (!(*v)[i].IsString())
        fail(std::string(key) + "[" + std::to_string(i) + "]", "expected a string");
    }
  }

  std::vector<uint64_t> ids(std::string_view key) const {
    const auto* v = get(key);
    std::vector<uint64_t> out;
    if (v == nullptr) return out;
    if (!v->IsArray()) fail(key, "expected a list of integers");
    out.reserve(v->Size());
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      if (!(*v)[i].IsUint64()) {
        fail(std::string(key) + "[" + std::to_string(i) + "]", "expected a non-negative integer");
      }
      out.push_back((*v)[i].GetUint64());
    }
    return out;
  }

 private:
  const rapidjson::Value& value_;
  const std::string& source_;
  std::string prefix_;
};

uint64_t weka_mix64(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A trace's hash ids are its own (hash_id_scope "local"): convoy's block id mixes in the trace's
// id, so two traces never share a block while a lead and its sub-agents do.
uint64_t weka_block_id(uint64_t trace_key, uint64_t local_id) {
  return weka_mix64(trace_key ^ weka_mix64(local_id));
}

uint64_t weka_trace_key(const std::string& id) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (const unsigned char c : id) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// One model call, checked.
struct WekaCall {
  double t_s = 0;                  // seconds on the trace's clock (a sub-agent's made absolute)
  double api_s = 0;                // seconds the server took (absent or negative: 0)
  int64_t input = 0;               // tokens of the call's whole context, >= 1
  int64_t output = 0;              // tokens generated, >= 0
  std::vector<uint64_t> hash_ids;  // the trace's local block ids
};

WekaCall read_weka_call(const WekaObject& call, bool streaming, int64_t block_tokens) {
  if (streaming) {
    call.only_keys({"t", "type", "model", "in", "out", "hash_ids", "input_types", "output_types",
                    "stop", "api_time", "think_time", "ttft"},
                   "a streaming call (type s)");
  } else {
    call.only_keys({"t", "type", "model", "in", "out", "hash_ids", "input_types", "output_types",
                    "stop", "api_time", "think_time"},
                   "a normal call (type n)");
  }
  WekaCall c;
  c.t_s = *call.number("t", true, 0);
  (void)call.string("model", true);
  c.input = *call.integer("in", true, 1, kMaxInputLengthTokens);
  c.output = *call.integer("out", true, 0, kMaxInputLengthTokens);
  c.hash_ids = call.ids("hash_ids");
  call.strings("input_types", false);
  call.strings("output_types", false);
  (void)call.string("stop", false);
  c.api_s = std::max(0.0, call.number("api_time", false, -kMaxWekaSeconds).value_or(0));
  (void)call.number("think_time", false, -kMaxWekaSeconds);
  if (streaming) (void)call.number("ttft", false, -kMaxWekaSeconds);
  const auto blocks = static_cast<uint64_t>((c.input + block_tokens - 1) / block_tokens);
  if (c.hash_ids.size() > blocks) {
    call.fail("hash_ids", std::to_string(c.hash_ids.size()) + " blocks for in " +
                              std::to_string(c.input) + " tokens in blocks of " +
                              std::to_string(block_tokens) + " (at most " + std::to_string(blocks) +
                              ")");
  }
  return c;
}

// One member of a trace's family: the lead or a sub-agent, its calls becoming its rows.
struct WekaMember {
  std::string session;
  std::string parent;             // "": a lead
  uint32_t spawn_after_turn = 0;  // with parent: the lead's calls before the marker, >= 1
  std::vector<TraceRow> rows;
  WekaCall previous;          // the last call added
  std::string previous_path;  // its key path ("requests[2]")
};

// Adds `call` (the object `at`) as the member's next row: the first keeps its blocks and whole
// input, a later one sends the input it adds after an end-to-start delay (AIPerf's rule).
void add_weka_call(WekaMember& m, WekaCall call, const WekaObject& at, uint64_t trace_key,
                   WekaTraceStats& stats) {
  TraceRow row;
  row.session = m.session;
  row.output_length = call.output;
  if (m.rows.empty()) {
    row.first = true;
    row.parent_session = m.parent;
    row.spawn_after_turn = m.spawn_after_turn;
    row.input_length = call.input;
    for (const uint64_t id : call.hash_ids) row.hash_ids.push_back(weka_block_id(trace_key, id));
  } else {
    const WekaCall& prev = m.previous;
    if (call.t_s < prev.t_s) {
      std::ostringstream s;
      s << call.t_s << " s is before the " << prev.t_s << " s of " << m.previous_path
        << ": time goes backwards within " << m.session;
      at.fail("t", s.str());
    }
    const double idle_ms = std::max(0.0, call.t_s - (prev.t_s + prev.api_s)) * 1000.0;
    row.time_ms = std::round(idle_ms * 1000.0) / 1000.0;  // to the microsecond
    if (row.time_ms > kMaxDelayMs) at.fail("t", "the idle gap is more than 1e9 ms");
    const NewInput added = new_input_tokens(call.input, prev.input, prev.output);
    stats.not_extending += added.extends ? 0 : 1;
    row.input_length = added.tokens;
  }
  m.rows.push_back(std::move(row));
  std::string path = at.prefix();
  if (!path.empty()) path.pop_back();  // "requests[2]." -> "requests[2]"
  m.previous_path = std::move(path);
  m.previous = std::move(call);
  ++stats.calls;
}

}  // namespace

namespace {

// What one trace holds while it is mapped.
struct WekaTraceState {
  const std::string& source;
  std::string id;
  uint64_t key = 0;  // weka_trace_key(id)
  int64_t block_tokens = 0;
  WekaMember lead;
  std::vector<WekaMember> members;                          // sub-agents, marker order
  std::unordered_map<std::string, std::string> agent_path;  // agent_id -> "requests[i]"
};

// A sub-agent marker at requests[index]: its calls become a member spawned after the lead's calls
// so far (none: a lead of its own).
void read_weka_subagent(const WekaObject& marker, size_t index, WekaTraceState& trace,
                        const std::map<std::string, std::string>& sessions, WekaTraceStats& stats) {
  marker.only_keys(
      {"t", "type", "agent_id", "subagent_type", "duration_ms", "total_tokens", "tool_use_count",
       "status", "requests", "models", "tool_tokens", "system_tokens"},
      "a sub-agent marker (type subagent)");
  const double spawn_s = *marker.number("t", true, 0);
  const std::string agent = marker.string("agent_id", true);
  (void)marker.string("subagent_type", true);
  (void)marker.string("status", true);
  marker.strings("models", true);
  for (const char* key : {"duration_ms", "total_tokens", "tool_use_count"}) {
    (void)marker.integer(key, false, 0, INT64_MAX);
  }
  (void)marker.integer("tool_tokens", false, 0, INT64_MAX);
  (void)marker.integer("system_tokens", false, 0, INT64_MAX);
  const std::string here = "requests[" + std::to_string(index) + "]";
  const auto [seen, added] = trace.agent_path.emplace(agent, here);
  if (!added) {
    marker.fail("agent_id", "\"" + agent + "\" is also the agent_id of " + seen->second +
                                ": a trace's sub-agents need distinct ids");
  }
  WekaMember m;
  m.session = trace.id + "/" + agent;
  if (const auto it = sessions.find(m.session); it != sessions.end()) {
    marker.fail("agent_id",
                "the sub-agent's session \"" + m.session + "\" is also a session of " + it->second);
  }
  m.spawn_after_turn = static_cast<uint32_t>(trace.lead.rows.size());
  if (m.spawn_after_turn > 0) m.parent = trace.id;
  const auto* calls = marker.get("requests");
  if (calls == nullptr) marker.fail("requests", "is required (the sub-agent's calls)");
  if (!calls->IsArray()) marker.fail("requests", "expected a list of calls");
  for (rapidjson::SizeType j = 0; j < calls->Size(); ++j) {
    const std::string path = marker.prefix() + "requests[" + std::to_string(j) + "].";
    if (!(*calls)[j].IsObject()) {
      throw ConfigError(trace.source + ": " + path.substr(0, path.size() - 1) +
                        ": expected an object (a call)");
    }
    const WekaObject call((*calls)[j], trace.source, path);
    const std::string type = call.string("type", true);
    if (type != "n" && type != "s") {
      call.fail("type", "\"" + type + "\" is not one of n, s (a sub-agent's requests are calls)");
    }
    WekaCall c = read_weka_call(call, type == "s", trace.block_tokens);
    // Inner times may be absolute or relative to the marker, as AIPerf reads them.
    if (c.t_s + kWekaRelativeEpsilonS < spawn_s) c.t_s += spawn_s;
    add_weka_call(m, std::move(c), call, trace.key, stats);
  }
  if (m.rows.empty()) {
    ++stats.empty_subagents;
    return;
  }
  if (m.parent.empty()) {
    ++stats.early_subagents;
  } else {
    ++stats.subagents;
  }
  trace.members.push_back(std::move(m));
}

// The trace's top-level keys, checked; sets its id and block size.
void read_weka_header(const WekaObject& top, WekaTraceState& trace) {
  top.only_keys({"id", "models", "block_size", "hash_id_scope", "tool_tokens", "system_tokens",
                 "requests", "totals"},
                "a Weka trace");
  trace.id = top.string("id", true);
  trace.key = weka_trace_key(trace.id);
  top.strings("models", true);
  trace.block_tokens = *top.integer("block_size", true, 1, kMaxWekaBlockTokens);
  const std::string scope = top.string("hash_id_scope", true);
  if (scope != "local") {
    top.fail("hash_id_scope", "\"" + scope +
                                  "\": only \"local\" is read (hash ids scoped to the trace), "
                                  "as in AIPerf");
  }
  (void)top.integer("tool_tokens", false, 0, INT64_MAX);
  (void)top.integer("system_tokens", false, 0, INT64_MAX);
  if (const auto* totals = top.get("totals"); totals && !totals->IsObject() && !totals->IsNull()) {
    top.fail("totals", "expected an object");
  }
  const auto* requests = top.get("requests");
  if (requests == nullptr) top.fail("requests", "is required (the trace's calls)");
  if (!requests->IsArray()) top.fail("requests", "expected a list");
}

}  // namespace

void WekaTraceMapper::map(const std::string& text, const std::string& source, std::ostream& out) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) {
    throw ConfigError(source + ": not JSON: " + rapidjson::GetParseError_En(doc.GetParseError()) +
                      " (at byte " + std::to_string(doc.GetErrorOffset()) + ")");
  }
  if (!doc.IsObject()) throw ConfigError(source + ": expected one JSON object (a Weka trace)");
  WekaTraceState trace{source, {}, 0, 0, {}, {}, {}};
  const WekaObject top(doc, source, "");
  read_weka_header(top, trace);
  if (const auto it = session_.find(trace.id); it != session_.end()) {
    top.fail("id", "\"" + trace.id + "\" is also the session of " + it->second +
                       ": each trace is one session, with an id of its own");
  }
  if (stats_.block_tokens != 0 && stats_.block_tokens != trace.block_tokens) {
    top.fail("block_size", std::to_string(trace.block_tokens) + " differs from the " +
                               std::to_string(stats_.block_tokens) + " of " + block_source_ +
                               ": the traces of a dataset share one block size");
  }
  trace.lead.session = trace.id;
  const auto& requests = doc["requests"];
  for (rapidjson::SizeType i = 0; i < requests.Size(); ++i) {
    const std::string path = "requests[" + std::to_string(i) + "]";
    if (!requests[i].IsObject()) throw ConfigError(source + ": " + path + ": expected an object");
    const WekaObject entry(requests[i], source, path + ".");
    const std::string type = entry.string("type", true);
    if (type == "subagent") {
      read_weka_subagent(entry, i, trace, session_, stats_);
    } else if (type == "n" || type == "s") {
      add_weka_call(trace.lead, read_weka_call(entry, type == "s", trace.block_tokens), entry,
                    trace.key, stats_);
    } else {
      entry.fail("type", "\"" + type + "\" is not one of n, s, subagent");
    }
  }
  if (stats_.block_tokens == 0) {
    stats_.block_tokens = trace.block_tokens;
    block_source_ = source;
  }
  ++stats_.traces;
  session_.emplace(trace.id, source);
  for (const auto& row : trace.lead.rows) out << mooncake_row_json(row);
  for (const auto& m : trace.members) {
    session_.emplace(m.session, source);
    for (const auto& row : m.rows) out << mooncake_row_json(row);
  }
}

std::vector<std::string> weka_trace_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) throw ConfigError(path + ": cannot read the dataset.path folder: " + ec.message());
  if (files.empty()) {
    throw ConfigError(path + ": dataset.path: the folder holds no *.json trace files");
  }
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    return fs::path(a).filename() < fs::path(b).filename();
  });
  return files;
}

std::string describe_weka_stats(const WekaTraceStats& s) {
  return std::to_string(s.traces) + " Weka traces, " + std::to_string(s.calls) + " calls, " +
         std::to_string(s.subagents) + " sub-agents in their lead's family, " +
         std::to_string(s.early_subagents) +
         " sub-agents before their lead's first call (replayed " + "as leads), " +
         std::to_string(s.empty_subagents) + " sub-agents without calls (skipped), " +
         std::to_string(s.not_extending) +
         " calls whose context did not extend the previous call's (1 new token sent), blocks of " +
         std::to_string(s.block_tokens) + " tokens";
}

namespace {

std::string read_weka_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open dataset.path: " + std::strerror(errno));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void require_weka_calls(const WekaTraceStats& s, const std::string& source) {
  if (s.calls == 0) throw ConfigError(source + ": requests: no trace holds a call (type n or s)");
}

}  // namespace

std::unique_ptr<Dataset> open_weka_trace(const std::string& path, const Config& config,
                                         const Corpus& corpus) {
  const std::vector<std::string> files = weka_trace_files(path);
  WekaTraceMapper mapper;
  auto dataset = index_trace_rows(
      path,
      [&](std::ostream& out) {
        for (const auto& file : files) mapper.map(read_weka_file(file), file, out);
        require_weka_calls(mapper.stats(), path);
        return mapper.stats().block_tokens;
      },
      config, corpus);
  log_info("dataset ", path, ": ", describe_weka_stats(mapper.stats()));
  return dataset;
}

std::vector<proto::Conversation> parse_weka_traces(
    const std::vector<std::pair<std::string, std::string>>& traces, const Config& config,
    const Corpus& corpus) {
  std::ostringstream mapped;
  WekaTraceMapper mapper;
  for (const auto& [source, text] : traces) mapper.map(text, source, mapped);
  const std::string source = traces.size() == 1 ? traces[0].first : std::string("weka traces");
  require_weka_calls(mapper.stats(), source);
  std::istringstream rows_in(mapped.str());
  return materialize(*index_mooncake_trace(rows_in, source + " (as Mooncake rows)",
                                           row_text(mapped.str()), config, corpus,
                                           mapper.stats().block_tokens));
}

}  // namespace convoy::controller
