// The run configuration (docs/config.md). Keys are the contract; defaults live here and only here,
// except those of the sections workers receive as they are (target.*, session_routing.*: their
// structs are the wire types in proto/messages.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "proto/messages.hpp"

namespace convoy {

// One component of a mixture distribution: picked with probability weight / (sum of the mix's
// weights), then drawn as a plain distribution (normal, clamped to [min, max]).
struct MixComponent {
  double weight = 0;  // relative (any positive scale, e.g. percent); >= 0
  double mean = 0;
  double stddev = 0;          // >= 0
  std::optional<double> min;  // clamp; the key's floor when unset
  std::optional<double> max;  // clamp; unbounded when unset
  bool operator==(const MixComponent&) const = default;
};

// A distribution for per-conversation or per-turn draws: normal, clamped to [min, max], or, when
// `mix` is non-empty, a mixture (AIPerf's sequence distribution): each draw picks a component by
// weight, then draws from it.
struct Distribution {
  Distribution() = default;
  Distribution(double m, double s, std::optional<double> lo, std::optional<double> hi)
      : mean(m), stddev(s), min(lo), max(hi) {}

  double mean = 0;
  double stddev = 0;
  std::optional<double> min;  // clamp; defaults depend on the key (>= 0 always)
  std::optional<double> max;
  // Empty: the plain form above. Non-empty (weights >= 0, summing to > 0): a mixture; then
  // mean and stddev are the mixture's own (for reports), min the key's floor (a lower clamp on
  // every component, raised where exact tokens need it) and max unset.
  std::vector<MixComponent> mix;
};

// The enums and sections a worker also needs are the wire types (proto/messages.hpp): defined
// once, their defaults written once.
using proto::Endpoint;
using proto::FinalMarker;
using proto::HistoryMode;
using proto::SessionRoutingMode;
enum class DatasetType {
  kSynthetic,
  kJsonl,
  kMooncake,
  kSharegpt,
  kAiperfSingleTurn,
  kAiperfMultiTurn,
  kDynamoTrace,  // Dynamo's request trace (dynamo.request.trace.v1), replayed as a Mooncake trace
  kWekaTrace     // Weka agent traces (one JSON object per session), replayed as Mooncake rows
};
// dataset.text: what synthetic prompts are made of.
enum class DatasetText { kCorpus, kRandomTokens };
enum class LoadMode { kConcurrency, kRate, kTrace, kUsers };
enum class Arrival { kConstant, kPoisson, kGamma };

// target.*: every key is a worker setting, so the section is proto::TargetSettings itself.
using TargetConfig = proto::TargetSettings;

// Passed to convoy-mock as flags; see mock/ for their meaning.
struct MockConfig {
  int workers = 4;
  std::string contract = "bind";  // none | legacy | bind | header
  std::string router_mode = "kv";
  double itl_ms = 5;
  double speedup = 1;
  bool engine_sessions = false;
  std::vector<std::string> extra_args;  // passed verbatim to convoy-mock
};

// dataset.prefixes (synthetic): a pool of `pool` distinct prefixes of `tokens` tokens each; every
// conversation's system prompt ends with `per_conversation` of them, drawn from the pool without
// repeats (the prefix-reuse pattern KV-cache studies synthesise).
struct PrefixesConfig {
  int64_t pool = 1;              // distinct prefixes, >= 1
  int64_t tokens = 128;          // tokens in each prefix, >= 1
  int64_t per_conversation = 1;  // prefixes per conversation, in [1, min(pool, 64)]
};

// A name drawn with a relative weight (dataset.tenants).
struct WeightedName {
  std::string name;
  double weight = 1;  // > 0
};

// dataset.agent_hints: Dynamo's nvext.agent_hints (ai-dynamo/dynamo
// lib/llm/src/protocols/openai/nvext.rs AgentHints: priority i32, strict_priority u32, osl u32,
// speculative_prefill bool), drawn once per conversation (sub-agents take their lead's).
struct AgentHintsConfig {
  std::optional<Distribution> priority;         // rounded, within i32
  std::optional<Distribution> strict_priority;  // rounded, within u32
  bool osl = false;  // send each turn's drawn output_tokens as agent_hints.osl
  std::optional<bool> speculative_prefill;
  bool empty() const { return !priority && !strict_priority && !osl && !speculative_prefill; }
};

// dataset.subagents (synthetic): each lead conversation spawns sub-agents with `probability`;
// `count` children (a draw), each with `turns` turns, spawned after the lead's turn
// `spawn_after_turn` (a draw, clamped to 1 .. the lead's turns).
struct SubagentsConfig {
  double probability = 0;  // [0, 1]
  Distribution count{1, 0, 1, 16};
  Distribution turns{2, 0, 1, 32};
  Distribution spawn_after_turn{1, 0, 1, std::nullopt};
};

struct DatasetConfig {
  DatasetType type = DatasetType::kSynthetic;
  std::optional<std::string> path;  // jsonl / mooncake
  int64_t conversations = 100;      // synthetic: how many; jsonl/mooncake: the first N when set
  bool conversations_set = false;   // given in the file or by --set (file datasets then cut)
  Distribution turns{4, 1, 1, 32};
  Distribution input_tokens{256, 32, 1, std::nullopt};
  Distribution output_tokens{64, 8, 1, std::nullopt};
  // output_tokens given in the file or by --set: a sharegpt dataset then draws every turn's
  // max_tokens from it instead of taking the length of the recorded reply.
  bool output_tokens_set = false;
  // sharegpt, aiperf_single_turn, aiperf_multi_turn: keep at most the first N turns (>= 1) of
  // each conversation; unset: every turn.
  std::optional<int64_t> max_turns;
  int64_t shared_prefix_tokens = 0;
  Distribution think_time_ms{0, 0, 0, std::nullopt};
  HistoryMode history = HistoryMode::kLive;
  std::optional<SubagentsConfig> subagents;  // synthetic only
  std::optional<PrefixesConfig> prefixes;    // synthetic only
  // dataset.tenants: each conversation draws one (seeded by its index); its name goes out as
  // nvext.cache_salt (Dynamo's per-tenant KV cache isolation) on every turn. Empty: none.
  std::vector<WeightedName> tenants;
  std::optional<AgentHintsConfig> agent_hints;  // nvext.agent_hints on every turn
  // dataset.tokenizer: a tokenizer.json (or its folder; resolved like dataset.path), or "server"
  // (the target's POST /tokenize). Unset: the 4-bytes-a-token estimate (docs/datasets.md).
  std::optional<std::string> tokenizer;
  bool count_chat_template = false;  // take the server's chat-template overhead off turn text
  // corpus: prose from the embedded corpus; random_tokens: words drawn uniformly from the local
  // tokenizer's single-token words (needs a tokenizer.json), so no two prompts share a prefix.
  DatasetText text = DatasetText::kCorpus;
  bool tokenizer_is_server() const { return tokenizer && *tokenizer == "server"; }
};

// --- load profiles (docs/config.md; parsed in config.cpp, expanded in load_profile.cpp) -------

enum class RampShape { kLinear, kExponential };

// A stage's level: a number (from == to, ramp false) or {from, to, shape} changing
// continuously over the stage's duration (a ramp needs duration_s).
struct LoadLevel {
  double from = 0;
  double to = 0;
  RampShape shape = RampShape::kLinear;
  bool ramp = false;
  // The level at `fraction` (0..1) of the stage: linear, or exponential from -> to (geometric).
  double at(double fraction) const;
};

// One stage of a profile, fully resolved: omitted keys take the top-level load.* values.
struct StageConfig {
  std::string name;
  int index = 0;
  LoadMode mode = LoadMode::kConcurrency;  // kConcurrency | kRate
  LoadLevel concurrency;  // mode concurrency: the slots; mode rate: the cap (load.concurrency)
  LoadLevel rate;         // mode rate: new conversations per second
  Arrival arrival = Arrival::kPoisson;
  double burstiness = 1.0;
  // Exactly one end.
  std::optional<double> duration_s;
  std::optional<int64_t> sessions;  // conversations started in this stage
  std::optional<int64_t> requests;  // measured requests sent in this stage
  double settle_s = 0;  // after the stage: no new conversation; excluded from every metric
  double value = 0;     // the stage's level as a number (a ramp's `to`; a sweep/search value)
  int line = 0;         // where it was defined (0: expanded from sweep/search or defaults)
};

// An SLO for a capacity search: metric tag -> {statistic (p50, p90, p99, avg, ...) -> limit in
// ms}, and an error-rate limit (fraction).
struct SloSpec {
  std::map<std::string, std::map<std::string, double>> limits;
  std::optional<double> error_rate;
};

struct SearchConfig {
  LoadMode vary = LoadMode::kConcurrency;  // kConcurrency | kRate
  double low = 1;
  double high = 512;
  std::optional<double> step_duration_s;  // exactly one of the two
  std::optional<int64_t> step_requests;
  double precision = 0.05;  // stop when (high - low) / high <= precision; in (0, 1)
  SloSpec slo;
  double settle_s = 0;  // after each step (in-flight work of the step finishes before judging)
  // A step whose result lies within the noise of the SLO runs again, up to this many more
  // times, and the majority of its runs decides; [0, 10], 0: never repeated.
  int64_t repeats = 2;
};

// load.abort_on: the live circuit breaker.
struct AbortOnConfig {
  double error_rate = 0.5;    // fraction of the window's ended requests that failed
  double window_s = 10;       // sliding window
  int64_t min_requests = 50;  // no judgement on fewer ended requests in the window
};

// load.sweep as written (kept for to_yaml and the report; `LoadConfig::stages` holds the
// expansion: one stage per value, named "concurrency=4" / "rate=2.5").
struct SweepConfig {
  LoadMode vary = LoadMode::kConcurrency;  // kConcurrency | kRate: which key held the list
  std::vector<double> values;              // in the order given
  std::optional<double> duration_s;        // exactly one end, per step
  std::optional<int64_t> sessions;
  std::optional<int64_t> requests;
  double settle_s = 0;  // between steps (after every step but the last)
};

enum class ProfileKind { kSingle, kStages, kSweep, kSearch };

struct CancelConfig {
  double fraction = 0.0;  // [0, 1]
  double after_ms = 0;
};

// load.trace (load.mode trace): how recorded timestamps become intended starts. Trace time is
// seconds from the trace's first timestamp; replay time is what the run waits.
struct TraceConfig {
  double speedup = 1;                    // > 0: replay time = trace time / speedup
  double start_offset_s = 0;             // >= 0: conversations starting before it are left out
  std::optional<double> end_offset_s;    // > start_offset_s: those at or after it left out
  std::optional<double> max_idle_gap_s;  // >= 0, replay seconds after speedup; unset: no cap
};

// load.warmup: a warmup at a level of its own, before the measure and outside its metrics.
// Reading it also sets LoadConfig::warmup_sessions or warmup_s (its end), so the run's warmup
// path is the one those keys take; only the level differs.
struct WarmupConfig {
  std::optional<int64_t> concurrency;  // conversations in flight; exactly one of concurrency, rate
  std::optional<double> rate;          // new conversations per second (load.arrival's process)
  std::optional<double> duration_s;    // exactly one of duration_s, sessions
  std::optional<int64_t> sessions;     // warmup conversations started
};

struct LoadConfig {
  LoadMode mode = LoadMode::kConcurrency;
  int64_t concurrency = 16;  // max conversations in flight (mode concurrency; cap in mode rate)
  double rate = 10;          // new conversations per second (mode rate)
  Arrival arrival = Arrival::kPoisson;
  double burstiness = 1.0;  // gamma shape
  std::optional<int64_t> sessions;
  std::optional<int64_t> requests;
  std::optional<double> duration_s;
  double grace_s = 30;
  int64_t warmup_sessions = 0;
  std::optional<double> warmup_s;  // warmup by time instead of warmup_sessions
  CancelConfig cancel;
  // The profile: kSingle = the top-level keys only (stages empty). kStages and kSweep: `stages`
  // holds every stage, expanded and resolved. kSearch: `search` is set, stages are made one by
  // one while the run goes (search_step() in load_profile.hpp).
  ProfileKind profile = ProfileKind::kSingle;
  std::vector<StageConfig> stages;
  std::optional<SweepConfig> sweep;  // kSweep: as written
  std::optional<SearchConfig> search;
  std::optional<AbortOnConfig> abort_on;
  // load.trials: the whole profile runs this many times in one command, trial t (1-based) with
  // seed + t - 1; >= 1 (1: one run, the outputs as always).
  int64_t trials = 1;
  std::optional<TraceConfig> trace;    // load.mode trace only
  std::optional<WarmupConfig> warmup;  // exclusive with warmup_sessions > 0 and warmup_s
  // At most this many requests between their send and their first token at once, across the
  // run (each worker holds a share); unset: no cap.
  std::optional<int64_t> prefill_concurrency;
};

// load.mode users: each of load.concurrency users sends its next turn (and, after its final
// turn, the first turn of its next conversation) this long after its previous request ended:
// load.concurrency / load.rate seconds, AIPerf's turn gap (--num-users / --user-centric-rate).
int64_t user_gap_ns(const LoadConfig& l);

// session_routing.*
using SessionRoutingConfig = proto::SessionRoutingSettings;

// workers.local's upper bound. One worker process drives thousands of concurrent streams
// (docs/benchmarks.md), so more processes than a large host has cores only costs memory,
// descriptors and registration time; a typo like 20000 would fork-bomb the host.
inline constexpr int kMaxLocalWorkers = 256;

struct WorkersConfig {
  int local = 2;
  std::string listen = "tcp://127.0.0.1:0";
  // Where workers push results; default: listen's host on a free port (ipc: listen + ".results").
  // A fixed port is what a firewall or a Kubernetes Service needs.
  std::optional<std::string> results_listen;
  std::optional<int> expect;  // default: local
  std::optional<std::string> curve_keys;
  double ready_timeout_s = 30;
};

struct OutputConfig {
  std::string dir = "artifacts/{name}-{timestamp}";
  bool records = true;
  bool html = true;
  // output.slice_s: time-sliced metrics (summary.json "timeslices", timeslices.csv); unset: none.
  std::optional<double> slice_s;
  // output.metrics_listen: HOST:PORT where the controller serves /metrics (Prometheus text)
  // during the run, e.g. "127.0.0.1:9464"; port 0 takes a free port (logged). Unset: off.
  std::optional<std::string> metrics_listen;
  // output.metrics_linger_s: seconds /metrics stays up after the run ended (its files written),
  // with the final counters, so that the last scrape sees them; a signal ends it at once.
  // 0..kMaxMetricsLingerS; 0: /metrics stops with the run.
  double metrics_linger_s = 0;
  // output.aiperf_export: also write AIPerf's profile_export_aiperf.json / .csv and
  // profile_export.jsonl.
  bool aiperf_export = false;
};

// telemetry.*: Prometheus text endpoints the controller scrapes during the run.
struct TelemetryEndpoint {
  std::string name;
  std::string url;
  std::map<std::string, std::string> headers;
  // true: unreachable at start fails the run (exit 3) before any traffic; false (the
  // default, so a dead sidecar never stops a benchmark): a warning and a counted error.
  bool required = false;
};
struct TelemetryConfig {
  double interval_s = 1;
  double timeout_s = 2;
  int64_t max_series = 10000;
  std::vector<TelemetryEndpoint> endpoints;  // with target.url mock, the mock's /metrics is added
};

struct FailOnConfig {
  std::optional<double> error_rate;  // fraction in [0, 1]
};

struct Config {
  std::string name = "convoy";
  uint64_t seed = 42;
  TargetConfig target;
  MockConfig mock;
  DatasetConfig dataset;
  LoadConfig load;
  SessionRoutingConfig session_routing;
  WorkersConfig workers;
  OutputConfig output;
  TelemetryConfig telemetry;
  std::map<std::string, double> slo;  // metric tag -> threshold in ms
  FailOnConfig fail_on;

  std::string source_path;  // the file it came from ("" for defaults)
  // Warnings found while loading ("FILE:LINE: key: what"); load_config/parse_config also log
  // each one with log_warn. Not errors: the run goes on.
  std::vector<std::string> warnings;

  int expected_workers() const { return workers.expect.value_or(workers.local); }
};

// Bad input: the message names the file, line and key. Callers exit with code 2.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads and validates a YAML file; `overrides` are "key.path=value" strings (--set), applied
// before validation. Throws ConfigError.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// Same, from text (tests); `path` is used in messages only.
Config parse_config(const std::string& yaml_text, const std::string& path,
                    const std::vector<std::string>& overrides = {});

// The resolved configuration as YAML (every key, defaults filled in). The API key never appears.
std::string to_yaml(const Config& config);

// Endpoint, HistoryMode and SessionRoutingMode: proto::to_string / proto::parse_*.
using proto::to_string;
const char* to_string(DatasetType v);
const char* to_string(DatasetText v);
const char* to_string(LoadMode v);
const char* to_string(Arrival v);
const char* to_string(RampShape v);
const char* to_string(ProfileKind v);

}  // namespace convoy
