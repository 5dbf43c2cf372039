#include "controller/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "common/log.hpp"
#include "controller/config/checks.hpp"
#include "controller/config/config_keys.hpp"
#include "controller/config/did_you_mean.hpp"
#include "controller/config/distribution_yaml.hpp"
#include "controller/config/limits.hpp"
#include "controller/config/load_profile.hpp"
#include "controller/config/load_profile_yaml.hpp"
#include "controller/config/load_shapes_yaml.hpp"
#include "controller/config/request_hints_yaml.hpp"
#include "controller/config/session_routing_writes.hpp"
#include "controller/config/target_models.hpp"
#include "controller/config/trace_yaml.hpp"
#include "controller/config/yaml_guard.hpp"
#include "controller/config/yaml_util.hpp"

namespace convoy {

namespace {

namespace fs = std::filesystem;
using config_detail::bind_problem;
using config_detail::is_endpoint;
using config_detail::listen_address_problem;
using config_detail::read_distribution;
using yaml_util::format_number;
using yaml_util::quote;
using yaml_util::Section;
using yaml_util::Source;
using namespace config_keys;  // the key table and enum spellings

std::string num(double v) { return format_number(v); }

void at_least(const Section& s, std::string_view key, double v, double min) {
  s.check(v >= min, key, "must be at least " + num(min) + ", got " + num(v));
}
void positive(const Section& s, std::string_view key, double v) {
  s.check(v > 0, key, "must be greater than 0, got " + num(v));
}

bool is_header_token(std::string_view s) {
  constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  if (s.empty()) return false;
  for (char c : s) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && kExtra.find(c) == std::string_view::npos) return false;
  }
  return true;
}

bool is_env_name(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && edit_distance(a, b) == 0;
}

// Relative paths in the file are relative to the file's folder; from --set, to the working one.
std::string resolve_path(const Source& src, const std::string& key_path, const std::string& p) {
  const fs::path base = fs::path(src.file()).parent_path();
  if (src.overridden(key_path) || fs::path(p).is_absolute() || base.empty()) return p;
  return (base / p).lexically_normal().string();
}

// --- sections -----------------------------------------------------------------------------

void read_headers(const Section& s, std::map<std::string, std::string>& out) {
  const YAML::Node n = s.node("headers");
  const std::string path = s.path("headers");
  if (!n.IsDefined()) return;
  out.clear();
  if (n.IsNull()) return;
  if (!n.IsMap())
    s.source().fail(path, "expected a mapping of header: value, got " + yaml_util::describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = it->first.IsScalar() ? it->first.Scalar() : std::string();
    const std::string key_path = path + "." + name;
    if (!is_header_token(name)) s.source().fail(key_path, "not a valid HTTP header name");
    if (!it->second.IsScalar()) {
      s.source().fail(key_path, "expected a string, got " + yaml_util::describe(it->second));
    }
    const std::string& value = it->second.Scalar();
    if (value.find_first_of("\r\n") != std::string::npos) {
      s.source().fail(key_path, "header values must not contain line breaks");
    }
    for (const auto& [existing, v] : out) {
      if (iequals(existing, name)) s.source().fail(key_path, "duplicate header '" + existing + "'");
    }
    out[name] = value;
  }
}

// Headers Dynamo's frontend reads as session identity (lib/llm/src/protocols/agents.rs in
// ai-dynamo/dynamo, commit 004e2c5: HEADER_DYNAMO_SESSION_ID and the agent-native mappings it
// falls back to: Claude Code's x-claude-code-session-id / x-claude-code-agent-id, Codex's
// thread-id, DeepSeek harness's x-deepseek-harness-session-id, OpenCode's x-session-id, and
// their parent headers). A fixed value in target.headers makes every request of the run one
// session (or one parent), whatever session_routing says.
const Keys kSessionIdentityHeaders = {"x-dynamo-session-id",
                                      "x-dynamo-parent-session-id",
                                      "x-dynamo-session-final",
                                      "x-claude-code-session-id",
                                      "x-claude-code-agent-id",
                                      "x-claude-code-parent-agent-id",
                                      "thread-id",
                                      "x-codex-parent-thread-id",
                                      "x-deepseek-harness-session-id",
                                      "x-deepseek-harness-parent-session-id",
                                      "x-session-id",
                                      "x-parent-session-id"};

bool is_http_url(std::string_view url) {
  const bool http = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
  return http && url.find("://") + 3 < url.size();
}

void warn_session_headers(const Section& s, const TargetConfig& t,
                          std::vector<std::string>& warnings) {
  for (const auto& header : t.headers) {
    const std::string& name = header.first;
    for (auto known : kSessionIdentityHeaders) {
      if (!iequals(name, known)) continue;
      const std::string path = s.path("headers") + "." + name;
      warnings.push_back(s.source().message(
          path, path,
          "Dynamo reads this header as session identity: with one fixed value every request of "
          "the run is one session; use session_routing.mode header (which sets "
          "X-Dynamo-Session-ID per conversation) instead"));
    }
  }
}

// target.urls: several frontends (exclusive with an explicit target.url); url becomes urls[0].
void read_target_urls(const Section& s, TargetConfig& t) {
  const YAML::Node n = s.node("urls");
  if (!n.IsDefined() || n.IsNull()) return;
  const std::string path = s.path("urls");
  const Source& src = s.source();
  if (!n.IsSequence()) src.fail(path, "expected a list of URLs, got " + yaml_util::describe(n));
  if (n.size() == 0) src.fail(path, "the list is empty (use null, or target.url for one URL)");
  if (s.present("url")) {
    src.fail_at(s.path("url"), s.path("url"),
                "target.url and target.urls are exclusive: list every frontend in urls");
  }
  t.urls.clear();
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    const std::string url = n[i].IsScalar() ? n[i].Scalar() : std::string();
    if (!is_http_url(url)) {
      src.fail(item_path, "expected an http:// or https:// URL, got " + yaml_util::describe(n[i]));
    }
    if (auto why = config_detail::url_problem(url); !why.empty()) src.fail(item_path, why);
    auto trimmed = [](std::string_view u) {
      while (!u.empty() && u.back() == '/') u.remove_suffix(1);
      return u;
    };
    for (const auto& earlier : t.urls) {
      if (trimmed(earlier) == trimmed(url)) src.fail(item_path, "duplicate URL '" + url + "'");
    }
    t.urls.push_back(url);
  }
  t.url = t.urls.front();
}

// target.path and target.responses_state: the route override and how a responses conversation
// keeps its history.
void read_target_route(const Section& s, TargetConfig& t) {
  std::optional<std::string> path;
  s.read("path", path);
  t.path = path.value_or("");
  s.check(t.path.empty() ||
              (t.path.front() == '/' && t.path.find_first_of("?# \t") == std::string::npos),
          "path", "expected a route starting with / (no query, no spaces), got '" + t.path + "'");
  s.read_enum("responses_state", t.responses_state, kResponsesStateNames,
              proto::parse_responses_state);
  s.check(t.responses_state == proto::ResponsesState::kClient ||
              t.endpoint == proto::Endpoint::kResponses,
          "responses_state",
          "server keeps the history by previous_response_id, which only the responses endpoint "
          "has (target.endpoint is " +
              std::string(to_string(t.endpoint)) + ")");
}

void read_target(const Section& top, TargetConfig& t, std::vector<std::string>& warnings) {
  const Section s = top.section("target", kTargetKeys);
  s.read("url", t.url);
  s.check(t.url == "mock" || is_http_url(t.url), "url",
          "expected \"mock\" or an http:// or https:// URL, got '" + t.url + "'");
  s.check(config_detail::url_problem(t.url).empty(), "url", config_detail::url_problem(t.url));
  read_target_urls(s, t);
  s.read_enum("endpoint", t.endpoint, kEndpointNames, proto::parse_endpoint);
  s.read("model", t.model);
  read_target_models(s, t);
  s.read("streaming", t.streaming);
  std::optional<std::string> key_env = t.api_key_env;
  s.read("api_key_env", key_env);
  t.api_key_env = key_env.value_or("");
  s.check(is_env_name(t.api_key_env), "api_key_env",
          "expected the NAME of an environment variable (letters, digits, _), got '" +
              t.api_key_env + "'");
  read_headers(s, t.headers);
  warn_session_headers(s, t, warnings);
  if (s.present("extra_body")) {
    t.extra_body_json =
        yaml_util::to_json_object(s.source(), s.node("extra_body"), s.path("extra_body"));
  }
  s.read("request_timeout_s", t.request_timeout_s);
  positive(s, "request_timeout_s", t.request_timeout_s);
  s.read("connect_timeout_s", t.connect_timeout_s);
  positive(s, "connect_timeout_s", t.connect_timeout_s);
  s.read("use_server_token_counts", t.use_server_token_counts);
  s.read("max_completion_tokens", t.max_completion_tokens);
  s.read("http2", t.http2);
  s.read("insecure", t.insecure);
  s.read("max_response_bytes", t.max_response_bytes);
  s.check(t.max_response_bytes > 0, "max_response_bytes",
          "must be a positive number of bytes, got " + std::to_string(t.max_response_bytes));
  s.read("server_timing", t.server_timing);
  read_target_route(s, t);
}

void read_mock(const Section& top, MockConfig& m) {
  const Section s = top.section("mock", kMockKeys);
  s.read("workers", m.workers);
  at_least(s, "workers", m.workers, 1);
  if (auto i = s.read_choice("contract", kMockContractNames)) m.contract = kMockContractNames[*i];
  if (auto i = s.read_choice("router_mode", kMockRouterNames)) m.router_mode = kMockRouterNames[*i];
  s.read("itl_ms", m.itl_ms);
  at_least(s, "itl_ms", m.itl_ms, 0);
  s.read("speedup", m.speedup);
  positive(s, "speedup", m.speedup);
  s.read("engine_sessions", m.engine_sessions);
  const YAML::Node args = s.node("extra_args");
  if (!args.IsDefined()) return;
  m.extra_args.clear();
  if (args.IsNull()) return;
  if (!args.IsSequence()) {
    s.source().fail(s.path("extra_args"),
                    "expected a list of strings, got " + yaml_util::describe(args));
  }
  for (const auto& arg : args) {
    if (!arg.IsScalar()) {
      s.source().fail(s.path("extra_args"),
                      "expected a list of strings, got an item " + yaml_util::describe(arg));
    }
    m.extra_args.push_back(arg.Scalar());
  }
}

// dataset.subagents: synthetic sub-agent conversations (JSONL rows name their parent instead).
void read_subagents(const Section& dataset, DatasetConfig& d) {
  const YAML::Node n = dataset.node("subagents");
  if (!n.IsDefined() || n.IsNull()) {
    if (n.IsDefined()) d.subagents.reset();
    return;
  }
  const Section s = dataset.section("subagents", kSubagentKeys);
  SubagentsConfig a = d.subagents.value_or(SubagentsConfig{});
  s.read("probability", a.probability);
  s.check(a.probability >= 0 && a.probability <= 1, "probability",
          "must be between 0 and 1, got " + num(a.probability));
  read_distribution(s, "count", a.count, 1);
  read_distribution(s, "turns", a.turns, 1);
  read_distribution(s, "spawn_after_turn", a.spawn_after_turn, 1);
  d.subagents = a;
}

// dataset.prefixes: a pool of shared prefixes, K of them in each conversation's system prompt.
void read_prefixes(const Section& dataset, DatasetConfig& d) {
  const YAML::Node n = dataset.node("prefixes");
  if (!n.IsDefined() || n.IsNull()) {
    if (n.IsDefined()) d.prefixes.reset();
    return;
  }
  const Section s = dataset.section("prefixes", kPrefixesKeys);
  PrefixesConfig p = d.prefixes.value_or(PrefixesConfig{});
  s.read("pool", p.pool);
  s.read("tokens", p.tokens);
  s.read("per_conversation", p.per_conversation);
  at_least(s, "pool", static_cast<double>(p.pool), 1);
  at_least(s, "tokens", static_cast<double>(p.tokens), 1);
  at_least(s, "per_conversation", static_cast<double>(p.per_conversation), 1);
  s.check(p.per_conversation <= p.pool, "per_conversation",
          "must be at most pool (" + std::to_string(p.pool) + "), got " +
              std::to_string(p.per_conversation));
  d.prefixes = p;
}

// dataset.tokenizer and dataset.count_chat_template (docs/datasets.md "Exact tokens"). The file is
// read when the dataset opens; here only that it exists.
void read_tokenizer(const Section& s, DatasetConfig& d) {
  s.read("tokenizer", d.tokenizer);
  s.read("count_chat_template", d.count_chat_template);
  if (d.tokenizer && !d.tokenizer_is_server()) {
    s.check(!d.tokenizer->empty(), "tokenizer", "must not be empty (use null for none)");
    d.tokenizer = resolve_path(s.source(), s.path("tokenizer"), *d.tokenizer);
    std::error_code ec;
    s.check(fs::exists(*d.tokenizer, ec), "tokenizer",
            "'" + *d.tokenizer + "' does not exist (a tokenizer.json, its folder, or server)");
  }
  s.check(!d.count_chat_template || d.tokenizer, "count_chat_template",
          "needs dataset.tokenizer (a tokenizer.json or server): the template overhead is the "
          "server's count less the tokenizer's");
  s.check(!d.count_chat_template || d.type == DatasetType::kSynthetic, "count_chat_template",
          "synthetic datasets only: a file's rows give their text as it is to be sent");
}

void read_dataset(const Section& top, DatasetConfig& d) {
  const Section s = top.section("dataset", kDatasetKeys);
  s.read_enum("type", d.type, kDatasetTypeNames);
  s.read("path", d.path);
  s.read("conversations", d.conversations);
  d.conversations_set = s.present("conversations") && !s.node("conversations").IsNull();
  at_least(s, "conversations", static_cast<double>(d.conversations), 1);
  read_distribution(s, "turns", d.turns, 1);
  read_distribution(s, "input_tokens", d.input_tokens, 1);
  read_distribution(s, "output_tokens", d.output_tokens, 1);
  d.output_tokens_set = s.present("output_tokens") && !s.node("output_tokens").IsNull();
  s.read("max_turns", d.max_turns);
  if (d.max_turns) at_least(s, "max_turns", static_cast<double>(*d.max_turns), 1);
  s.read("shared_prefix_tokens", d.shared_prefix_tokens);
  at_least(s, "shared_prefix_tokens", static_cast<double>(d.shared_prefix_tokens), 0);
  read_distribution(s, "think_time_ms", d.think_time_ms, 0);
  s.read_enum("history", d.history, kHistoryNames, proto::parse_history_mode);
  read_subagents(s, d);
  read_prefixes(s, d);
  read_tokenizer(s, d);
  config_detail::read_request_hints(s, d);
  s.read_enum("text", d.text, kDatasetTextNames);
  s.check(d.text != DatasetText::kRandomTokens || (d.tokenizer && !d.tokenizer_is_server()), "text",
          "random_tokens draws from a tokenizer's vocabulary: set dataset.tokenizer to a "
          "tokenizer.json (or its folder; server cannot list one)");

  const Source& src = s.source();
  if (d.path) {
    s.check(!d.path->empty(), "path", "must not be empty (use null for none)");
    d.path = resolve_path(src, s.path("path"), *d.path);
  }
  const bool turn_lists = d.type == DatasetType::kSharegpt ||
                          d.type == DatasetType::kAiperfSingleTurn ||
                          d.type == DatasetType::kAiperfMultiTurn;
  s.check(!d.max_turns || turn_lists, "max_turns",
          "applies to dataset.type sharegpt, aiperf_single_turn and aiperf_multi_turn");
  if (d.type == DatasetType::kSynthetic) return;
  const std::string type = to_string(d.type);
  if (d.subagents) {
    src.fail_at(s.path("subagents"), s.path("subagents"),
                "synthetic datasets only; a " + type +
                    " dataset names sub-agents in its rows (\"parent\", \"spawn_after_turn\")");
  }
  s.check(d.text == DatasetText::kCorpus, "text",
          "synthetic datasets only; a " + type + " dataset's rows give every prompt");
  if (d.prefixes) {
    src.fail_at(s.path("prefixes"), s.path("prefixes"),
                "synthetic datasets only; a " + type + " dataset's rows give every prompt");
  }
  if (!d.path) src.fail_at(s.path("type"), s.path("path"), "required when dataset.type is " + type);
  std::error_code ec;
  if (!fs::exists(*d.path, ec)) s.check(false, "path", "file '" + *d.path + "' does not exist");
  // A trace may be a folder of files: the segments Dynamo's file sink rolls, or Weka's traces
  // (every *.json in it, one session each).
  const bool folders = d.type == DatasetType::kDynamoTrace || d.type == DatasetType::kWekaTrace;
  s.check(folders || !fs::is_directory(*d.path, ec), "path",
          "'" + *d.path + "' is a folder, not a file");
}

void read_load(const Section& top, LoadConfig& l) {
  const Section s = top.section("load", kLoadKeys);
  s.read_enum("mode", l.mode, kLoadModeNames);
  s.read("concurrency", l.concurrency);
  at_least(s, "concurrency", static_cast<double>(l.concurrency), 1);
  s.read("rate", l.rate);
  if (l.mode == LoadMode::kRate) {
    s.check(l.rate > 0, "rate", "must be greater than 0 in rate mode, got " + num(l.rate));
  }
  s.read_enum("arrival", l.arrival, kArrivalNames);
  s.read("burstiness", l.burstiness);
  positive(s, "burstiness", l.burstiness);
  s.read("sessions", l.sessions);
  if (l.sessions) at_least(s, "sessions", static_cast<double>(*l.sessions), 1);
  s.read("requests", l.requests);
  if (l.requests) at_least(s, "requests", static_cast<double>(*l.requests), 1);
  s.read("duration_s", l.duration_s);
  if (l.duration_s) positive(s, "duration_s", *l.duration_s);
  s.read("grace_s", l.grace_s);
  at_least(s, "grace_s", l.grace_s, 0);
  s.read("warmup_sessions", l.warmup_sessions);
  at_least(s, "warmup_sessions", static_cast<double>(l.warmup_sessions), 0);
  const Section c = s.section("cancel", kCancelKeys);
  c.read("fraction", l.cancel.fraction);
  c.check(l.cancel.fraction >= 0 && l.cancel.fraction <= 1, "fraction",
          "must be between 0 and 1, got " + num(l.cancel.fraction));
  c.read("after_ms", l.cancel.after_ms);
  at_least(c, "after_ms", l.cancel.after_ms, 0);
  config_detail::read_load_profile(s, l);
  config_detail::read_trace(s, l);
  s.read("trials", l.trials);
  at_least(s, "trials", static_cast<double>(l.trials), 1);
  config_detail::read_load_shapes(s, l);
}

void read_session_routing(const Section& top, SessionRoutingConfig& r) {
  const Section s = top.section("session_routing", kRoutingKeys);
  s.read("header_name", r.header_name);
  s.check(is_header_token(r.header_name), "header_name",
          "not a valid HTTP header name: '" + r.header_name + "'");
  read_routing_modes(s, r);  // and the other routers' keys, checked against header_name
  double timeout_s = static_cast<double>(r.timeout_s);
  s.read("timeout_s", timeout_s);
  constexpr double kMaxTimeoutS = 1e12;  // far beyond any TTL; keeps the cast defined
  s.check(timeout_s >= 1 && timeout_s <= kMaxTimeoutS && std::floor(timeout_s) == timeout_s,
          "timeout_s", "must be a whole positive number of seconds, got " + num(timeout_s));
  r.timeout_s = static_cast<int64_t>(timeout_s);
  s.read_enum("final_marker", r.final_marker, kFinalMarkerNames, proto::parse_final_marker);
  // auto may learn header (and drops the marker otherwise: workers send it in header mode only).
  s.check(r.final_marker == FinalMarker::kOff || r.mode == SessionRoutingMode::kHeader ||
              r.mode == SessionRoutingMode::kAuto,
          "final_marker",
          "X-Dynamo-Session-Final is a header-mode marker: set session_routing.mode to header, or "
          "final_marker to off (mode is " +
              std::string(to_string(r.mode)) + ")");
  s.read("verify", r.verify);
}

void read_workers(const Section& top, WorkersConfig& w) {
  const Section s = top.section("workers", kWorkersKeys);
  s.read("local", w.local);
  at_least(s, "local", w.local, 0);
  s.check(w.local <= kMaxLocalWorkers, "local",
          "at most " + std::to_string(kMaxLocalWorkers) + " worker processes per host, got " +
              std::to_string(w.local) + " (one worker drives thousands of streams; use remote " +
              "workers beyond that)");
  s.read("listen", w.listen);
  s.check(is_endpoint(w.listen), "listen",
          "expected tcp://HOST:PORT or ipc://PATH, got '" + w.listen + "'");
  s.check(bind_problem(w.listen).empty(), "listen", bind_problem(w.listen));
  s.read("results_listen", w.results_listen);
  if (w.results_listen) {
    s.check(is_endpoint(*w.results_listen), "results_listen",
            "expected tcp://HOST:PORT or ipc://PATH, got '" + *w.results_listen + "'");
    s.check(bind_problem(*w.results_listen).empty(), "results_listen",
            bind_problem(*w.results_listen));
  }
  s.read("expect", w.expect);
  if (w.expect) at_least(s, "expect", *w.expect, 1);
  if (w.local == 0 && !w.expect) {
    s.source().fail_at(s.path("local"), s.path("expect"),
                       "required when workers.local is 0 (how many remote workers to wait for)");
  }
  s.read("curve_keys", w.curve_keys);
  if (w.curve_keys) {
    w.curve_keys = resolve_path(s.source(), s.path("curve_keys"), *w.curve_keys);
    std::error_code ec;
    s.check(fs::is_directory(*w.curve_keys, ec), "curve_keys",
            "folder '" + *w.curve_keys + "' does not exist (create it with `convoy keygen`)");
    const std::string keys = config_detail::curve_keys_problem(*w.curve_keys, w.local);
    s.check(keys.empty(), "curve_keys", keys);
  }
  s.read("ready_timeout_s", w.ready_timeout_s);
  positive(s, "ready_timeout_s", w.ready_timeout_s);
}

void read_output(const Section& top, OutputConfig& o) {
  const Section s = top.section("output", kOutputKeys);
  s.read("dir", o.dir);
  s.check(!o.dir.empty(), "dir", "must not be empty");
  for (std::size_t open = o.dir.find('{'); open != std::string::npos;
       open = o.dir.find('{', open + 1)) {
    const std::size_t close = o.dir.find('}', open);
    s.check(close != std::string::npos, "dir", "unclosed '{' in '" + o.dir + "'");
    const std::string name = o.dir.substr(open + 1, close - open - 1);
    bool known = false;
    for (auto p : kOutputSubstitutions) known = known || p == name;
    std::string what = "unknown substitution {" + name + "} (use {name} or {timestamp})";
    if (auto near = closest_match(name, kOutputSubstitutions)) {
      what = "unknown substitution {" + name + "}; did you mean {" + *near + "}?";
    }
    s.check(known, "dir", what);
  }
  s.read("records", o.records);
  s.read("html", o.html);
  s.read("slice_s", o.slice_s);
  if (o.slice_s) positive(s, "slice_s", *o.slice_s);
  s.read("metrics_listen", o.metrics_listen);
  if (o.metrics_listen) {
    s.check(!listen_address_problem(*o.metrics_listen), "metrics_listen",
            listen_address_problem(*o.metrics_listen).value_or(""));
  }
  s.read("metrics_linger_s", o.metrics_linger_s);
  s.read("aiperf_export", o.aiperf_export);
}

void read_telemetry(const Section& top, TelemetryConfig& t) {
  const Section s = top.section("telemetry", kTelemetryKeys);
  s.read("interval_s", t.interval_s);
  positive(s, "interval_s", t.interval_s);
  s.read("timeout_s", t.timeout_s);
  positive(s, "timeout_s", t.timeout_s);
  s.read("max_series", t.max_series);
  at_least(s, "max_series", static_cast<double>(t.max_series), 1);
  const YAML::Node n = s.node("endpoints");
  if (!n.IsDefined()) return;
  t.endpoints.clear();
  if (n.IsNull()) return;
  const std::string path = s.path("endpoints");
  if (!n.IsSequence()) {
    s.source().fail(
        path, "expected a list of {name, url, headers, required}, got " + yaml_util::describe(n));
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    const Section e(s.source(), n[i], path + "[" + std::to_string(i) + "]", kTelemetryEndpointKeys);
    TelemetryEndpoint ep;
    e.read("name", ep.name);
    e.check(!ep.name.empty(), "name", "required: a name for the endpoint (used in the outputs)");
    for (const auto& earlier : t.endpoints) {
      e.check(earlier.name != ep.name, "name", "duplicate endpoint name '" + ep.name + "'");
    }
    e.read("url", ep.url);
    e.check(is_http_url(ep.url), "url",
            "expected an http:// or https:// URL, got '" + ep.url + "'");
    e.check(config_detail::url_problem(ep.url).empty(), "url", config_detail::url_problem(ep.url));
    read_headers(e, ep.headers);
    e.read("required", ep.required);
    t.endpoints.push_back(std::move(ep));
  }
}

void read_top(const Section& top, Config& c) {
  top.read("name", c.name);
  top.check(!c.name.empty(), "name", "must not be empty");
  const std::string name_problem = config_detail::folder_name_problem(c.name);
  top.check(name_problem.empty(), "name", name_problem);
  top.read("seed", c.seed);
  read_target(top, c.target, c.warnings);
  read_mock(top, c.mock);
  read_dataset(top, c.dataset);
  read_load(top, c.load);
  read_session_routing(top, c.session_routing);
  if ((c.session_routing.mode != SessionRoutingMode::kOff || !c.session_routing.writes.empty()) &&
      c.target.endpoint == proto::Endpoint::kEmbeddings) {
    c.warnings.push_back(top.source().message(
        "session_routing.mode", "session_routing.mode",
        "session routing does not apply to embeddings (no conversation to pin): nothing is "
        "overlaid, the run goes as with mode off"));
  }
  read_workers(top, c.workers);
  read_output(top, c.output);
  read_telemetry(top, c.telemetry);

  const Section slo = top.section("slo", kSloMetrics);
  c.slo.clear();
  for (auto metric : kSloMetrics) {
    std::optional<double> v;
    slo.read(metric, v);
    if (!v) continue;
    positive(slo, metric, *v);
    c.slo[std::string(metric)] = *v;
  }
  const Section fail_on = top.section("fail_on", kFailOnKeys);
  fail_on.read("error_rate", c.fail_on.error_rate);
  if (auto r = c.fail_on.error_rate) {
    fail_on.check(*r >= 0 && *r <= 1, "error_rate", "must be between 0 and 1, got " + num(*r));
  }

  // Cross-section rules, reported at the key that decides them.
  if (c.load.mode == LoadMode::kTrace && c.dataset.type == DatasetType::kSynthetic) {
    top.source().fail("load.mode",
                      "trace replays recorded timestamps: set dataset.type to mooncake or jsonl");
  }
  if (c.load.mode == LoadMode::kTrace && c.dataset.type == DatasetType::kWekaTrace) {
    top.source().fail("load.mode",
                      "trace needs start times across sessions, and a Weka trace's t is each "
                      "session's own clock: use load.mode concurrency, rate or users");
  }
  config_detail::check_prefill_share(top.source(), c);
}

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& path,
                    const std::vector<std::string>& overrides) {
  YAML::Node root;
  yaml_guard::check(yaml_text, path);  // one acyclic, bounded document before any node is built
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    const std::string line = e.mark.line >= 0 ? ":" + std::to_string(e.mark.line + 1) : "";
    throw ConfigError(path + line + ": invalid YAML: " + e.msg);
  }
  Source src(path, root);
  if (root.IsDefined() && !root.IsNull() && !root.IsMap()) {
    const YAML::Mark mark = root.Mark();
    src.fail_at("", "",
                "expected a mapping of keys at the top level, got " + yaml_util::describe(root),
                &mark);
  }
  try {
    for (const auto& o : overrides) src.apply_override(o);
    src.check_utf8();  // every key and string, wherever it is read
    src.set_known_paths(known_paths());
    Config c;
    c.source_path = path;
    read_top(Section(src, src.root(), "", kTopKeys), c);
    config_detail::warn_ignored_load_keys(src, c.load, c.warnings);
    config_detail::warn_ignored_dataset_keys(src, c.dataset, c.warnings);
    config_detail::warn_ignored_output_keys(src, c.output, c.warnings);
    config_detail::check_limits(src, c);
    for (const auto& w : c.warnings) log_warn(w);
    return c;
  } catch (const YAML::Exception& e) {  // a yaml-cpp surprise still names the file
    throw ConfigError(path + ": " + e.what());
  }
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw ConfigError(path + ": no such file");
  if (fs::is_directory(path, ec)) throw ConfigError(path + ": is a folder, not a YAML file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw ConfigError(path + ": cannot be read");
  return parse_config(text.str(), path, overrides);
}

}  // namespace convoy
