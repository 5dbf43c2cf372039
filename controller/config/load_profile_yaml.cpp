#include "controller/config/load_profile_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "controller/config/checks.hpp"
#include "controller/config/limits.hpp"
#include "controller/config/load_profile.hpp"

namespace convoy::config_detail {

namespace {

using yaml_util::format_number;
using yaml_util::quote;
using yaml_util::Section;
using yaml_util::Source;
using Keys = std::vector<std::string_view>;

const Keys kStageKeys = {"name",       "mode",       "concurrency", "rate",     "arrival",
                         "burstiness", "duration_s", "sessions",    "requests", "settle_s"};
const Keys kLevelKeys = {"from", "to", "shape"};
const Keys kSweepKeys = {"concurrency", "rate", "duration_s", "sessions", "requests", "settle_s"};
const Keys kSearchKeys = {"vary",      "low", "high",     "step_duration_s", "step_requests",
                          "precision", "slo", "settle_s", "repeats"};
// load.search.repeats' upper bound: 11 runs of one step already decide by a clear majority.
constexpr int64_t kMaxSearchRepeats = 10;
const Keys kAbortOnKeys = {"error_rate", "window_s", "min_requests"};
const Keys kStageModeNames = {"concurrency", "rate"};  // LoadMode's first two
const Keys kRampShapeNames = {"linear", "exponential"};
const Keys kArrivalNames = {"constant", "poisson", "gamma"};  // config.cpp's, in Arrival order
const Keys kEnds = {"duration_s", "sessions", "requests"};
const Keys kStepEnds = {"step_duration_s", "step_requests"};

std::string num(double v) { return format_number(v); }

bool given(const Section& s, std::string_view key) {
  const YAML::Node n = s.node(key);
  return n.IsDefined() && !n.IsNull();
}

// The SLO vocabulary as Keys (string_views into static storage).
const Keys& slo_metric_keys() {
  static const std::vector<std::string> names = known_slo_metrics();
  static const Keys keys = [] {
    Keys k(names.begin(), names.end());
    k.emplace_back("error_rate");
    return k;
  }();
  return keys;
}
const Keys& slo_statistic_keys() {
  static const std::vector<std::string> names = known_slo_statistics();
  static const Keys keys(names.begin(), names.end());
  return keys;
}

// Exactly one of `ends` given (non-null) in `s`; the message names `what` ends.
void check_one_end(const Section& s, const std::string& where, const Keys& ends,
                   const std::string& what) {
  std::string first;
  for (auto key : ends) {
    if (!given(s, key)) continue;
    if (first.empty()) {
      first = key;
      continue;
    }
    s.check(false, key,
            what + " has one end: " + first + " and " + std::string(key) + " are both given");
  }
  std::string names;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == ends.size() ? " or " : ", ") + std::string(ends[i]);
  }
  if (first.empty()) s.source().fail(where, what + " needs one end: " + names);
}

// The ends of a stage or sweep step: duration_s > 0, sessions >= 1, requests >= 1.
void read_ends(const Section& s, std::optional<double>& duration_s,
               std::optional<int64_t>& sessions, std::optional<int64_t>& requests) {
  s.read("duration_s", duration_s);
  if (duration_s) s.check(*duration_s > 0, "duration_s", "must be greater than 0");
  s.read("sessions", sessions);
  if (sessions) s.check(*sessions >= 1, "sessions", "must be at least 1");
  s.read("requests", requests);
  if (requests) s.check(*requests >= 1, "requests", "must be at least 1");
}

void read_settle(const Section& s, std::string_view key, double& settle_s) {
  s.read(key, settle_s);
  s.check(settle_s >= 0, key, "must be at least 0, got " + num(settle_s));
}

// A level's bounds: concurrency is a whole number of slots >= 1; a rate is > 0 (a ramp's end
// may be 0: a ramp up from nothing, or down to nothing).
struct LevelRule {
  bool whole = false;      // concurrency
  bool allow_ramp = true;  // false: a cap (the concurrency of a rate stage)
};

void check_level_value(const Section& s, std::string_view key, double v, LevelRule rule,
                       bool ramp_end) {
  if (rule.whole) {
    s.check(std::floor(v) == v && v >= 1, key,
            "must be a whole number of conversations, at least 1, got " + num(v));
    return;
  }
  if (ramp_end) {
    s.check(v >= 0, key, "must be at least 0, got " + num(v));
  } else {
    s.check(v > 0, key, "must be greater than 0, got " + num(v));
  }
}

// A number, or {from, to, shape}; nullopt when absent or null.
std::optional<LoadLevel> read_level(const Section& s, std::string_view key, LevelRule rule) {
  const YAML::Node n = s.node(key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  const std::string path = s.path(key);
  if (n.IsScalar()) {
    auto v = yaml_util::parse_number(n.Scalar());
    if (!v) {
      s.source().fail(path, std::string("expected a number") +
                                (rule.allow_ramp ? " or {from, to, shape}" : "") + ", got " +
                                yaml_util::describe(n));
    }
    check_level_value(s, key, *v, rule, false);
    return LoadLevel{*v, *v, RampShape::kLinear, false};
  }
  if (!n.IsMap() || !rule.allow_ramp) {
    s.source().fail(path, std::string("expected a number") +
                              (rule.allow_ramp ? " or {from, to, shape}" : " (a cap, not a ramp)") +
                              ", got " + yaml_util::describe(n));
  }
  const Section r(s.source(), n, path, kLevelKeys);
  LoadLevel level;
  level.ramp = true;
  for (auto end : {"from", "to"}) {
    if (!given(r, end)) r.source().fail(path, std::string("a ramp needs `") + end + "`");
  }
  r.read("from", level.from);
  r.read("to", level.to);
  r.read_enum("shape", level.shape, kRampShapeNames);
  r.check(level.from * level.to >= 0, "to",
          "from (" + num(level.from) + ") and to (" + num(level.to) + ") have different signs");
  check_level_value(r, "from", level.from, rule, true);
  check_level_value(r, "to", level.to, rule, true);
  r.check(level.from != 0 || level.to != 0, "to", "a ramp from 0 to 0 sends nothing");
  if (level.shape == RampShape::kExponential) {
    r.check(level.from > 0 && level.to > 0, "shape",
            "an exponential ramp needs from and to greater than 0 (it multiplies the level)");
  }
  return level;
}

// A profile of at most limits::kMaxStages stages: each costs the controller state for the run.
void check_stage_count(const Source& src, const std::string& path, std::size_t n,
                       const char* what) {
  if (n <= limits::kMaxStages) return;
  src.fail(path, std::to_string(n) + " " + what + ": a profile holds at most " +
                     std::to_string(limits::kMaxStages) + " stages");
}

LoadLevel constant(double v) { return LoadLevel{v, v, RampShape::kLinear, false}; }

StageConfig read_stage(const Source& src, const YAML::Node& item, const std::string& path,
                       int index, const LoadConfig& l) {
  const Section s(src, item, path, kStageKeys);
  StageConfig st;
  st.index = index;
  st.line = item.Mark().line >= 0 ? item.Mark().line + 1 : 0;
  st.name = "stage-" + std::to_string(index + 1);
  s.read("name", st.name);
  s.check(!st.name.empty(), "name", "must not be empty");
  s.check(control_char_problem(st.name).empty(), "name", control_char_problem(st.name));
  st.mode = l.mode == LoadMode::kRate ? LoadMode::kRate : LoadMode::kConcurrency;
  s.read_enum("mode", st.mode, kStageModeNames);
  const bool rate_mode = st.mode == LoadMode::kRate;

  const auto cap = static_cast<double>(l.concurrency);
  st.concurrency =
      read_level(s, "concurrency", LevelRule{true, !rate_mode}).value_or(constant(cap));
  if (rate_mode) {
    st.rate = read_level(s, "rate", LevelRule{false, true}).value_or(constant(l.rate));
    if (!given(s, "rate")) {
      s.check(l.rate > 0, "rate", "required: load.rate is " + num(l.rate));
    }
  } else {
    for (auto key : {"rate", "arrival", "burstiness"}) {
      s.check(!s.present(key), key, "only for mode rate stages (this stage is mode concurrency)");
    }
    st.rate = constant(l.rate);
  }
  st.arrival = l.arrival;
  s.read_enum("arrival", st.arrival, kArrivalNames);
  st.burstiness = l.burstiness;
  s.read("burstiness", st.burstiness);
  s.check(st.burstiness > 0, "burstiness", "must be greater than 0, got " + num(st.burstiness));

  check_one_end(s, path, kEnds, "a stage");
  read_ends(s, st.duration_s, st.sessions, st.requests);
  const char* ramp_key = st.concurrency.ramp ? "concurrency" : st.rate.ramp ? "rate" : nullptr;
  if (ramp_key && !st.duration_s) {
    s.check(false, ramp_key, "a ramp needs duration_s (the level changes over the stage's time)");
  }
  read_settle(s, "settle_s", st.settle_s);
  st.value = rate_mode ? st.rate.to : st.concurrency.to;
  return st;
}

void read_stages(const Section& load, LoadConfig& l) {
  const YAML::Node n = load.node("stages");
  const std::string path = load.path("stages");
  const Source& src = load.source();
  if (!n.IsSequence()) {
    src.fail(path, "expected a list of stages, got " + yaml_util::describe(n));
  }
  if (n.size() == 0) src.fail(path, "the stage list is empty");
  check_stage_count(src, path, n.size(), "stages");
  l.stages.clear();
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    StageConfig st = read_stage(src, n[i], item_path, static_cast<int>(i), l);
    for (const auto& earlier : l.stages) {
      if (earlier.name == st.name) {
        src.fail(item_path + ".name", "duplicate stage name '" + st.name + "' (also stages[" +
                                          std::to_string(earlier.index) + "])");
      }
    }
    l.stages.push_back(std::move(st));
  }
}

void read_sweep(const Section& load, LoadConfig& l) {
  const Section s = load.section("sweep", kSweepKeys);
  const Source& src = s.source();
  SweepConfig sw;
  const bool by_concurrency = given(s, "concurrency");
  if (by_concurrency && given(s, "rate")) {
    s.check(false, "rate", "a sweep varies one thing: concurrency or rate, not both");
  }
  if (!by_concurrency && !given(s, "rate")) {
    src.fail(load.path("sweep"), "needs concurrency: [values] or rate: [values]");
  }
  sw.vary = by_concurrency ? LoadMode::kConcurrency : LoadMode::kRate;
  const char* key = by_concurrency ? "concurrency" : "rate";
  const YAML::Node list = s.node(key);
  if (!list.IsSequence()) {
    src.fail(s.path(key), "expected a list of values, got " + yaml_util::describe(list));
  }
  if (list.size() == 0) src.fail(s.path(key), "the list of values is empty");
  check_stage_count(src, s.path(key), list.size(), "values (one stage each)");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = s.path(key) + "[" + std::to_string(i) + "]";
    if (!list[i].IsScalar()) {
      src.fail(item_path, "expected a number, got " + yaml_util::describe(list[i]));
    }
    const std::optional<double> parsed = yaml_util::parse_number(list[i].Scalar());
    if (!parsed) src.fail(item_path, "expected a number, got " + yaml_util::describe(list[i]));
    const double v = *parsed;
    if (by_concurrency && (std::floor(v) != v || v < 1)) {
      src.fail(item_path, "must be a whole number of conversations, at least 1, got " + num(v));
    }
    if (!by_concurrency && v <= 0) src.fail(item_path, "must be greater than 0, got " + num(v));
    for (double earlier : sw.values) {
      if (earlier == v) src.fail(item_path, "duplicate value " + num(v));
    }
    sw.values.push_back(v);
  }
  check_one_end(s, load.path("sweep"), kEnds, "a sweep step");
  read_ends(s, sw.duration_s, sw.sessions, sw.requests);
  read_settle(s, "settle_s", sw.settle_s);

  l.stages.clear();
  for (std::size_t i = 0; i < sw.values.size(); ++i) {
    const double v = sw.values[i];
    StageConfig st;
    st.index = static_cast<int>(i);
    st.mode = sw.vary;
    st.name = stage_value_name(sw.vary, v);
    st.concurrency = constant(by_concurrency ? v : static_cast<double>(l.concurrency));
    st.rate = constant(by_concurrency ? l.rate : v);
    st.arrival = l.arrival;
    st.burstiness = l.burstiness;
    st.duration_s = sw.duration_s;
    st.sessions = sw.sessions;
    st.requests = sw.requests;
    st.settle_s = i + 1 < sw.values.size() ? sw.settle_s : 0;
    st.value = v;
    l.stages.push_back(std::move(st));
  }
  l.sweep = std::move(sw);
}

SloSpec read_search_slo(const Section& search) {
  const Section s = search.section("slo", slo_metric_keys());
  const Source& src = s.source();
  SloSpec slo;
  for (auto metric : slo_metric_keys()) {
    if (metric == "error_rate" || !given(s, metric)) continue;
    const Section stats = s.section(metric, slo_statistic_keys());
    std::map<std::string, double> limits;
    for (auto stat : slo_statistic_keys()) {
      std::optional<double> v;
      stats.read(stat, v);
      if (!v) continue;
      stats.check(*v > 0, stat, "must be greater than 0 (ms), got " + num(*v));
      limits[std::string(stat)] = *v;
    }
    if (limits.empty()) {
      src.fail(s.path(metric), "name at least one statistic and its limit in ms, e.g. {p99: 500}");
    }
    slo.limits[std::string(metric)] = std::move(limits);
  }
  s.read("error_rate", slo.error_rate);
  if (auto r = slo.error_rate) {
    s.check(*r >= 0 && *r <= 1, "error_rate", "must be between 0 and 1, got " + num(*r));
  }
  if (slo.limits.empty() && !slo.error_rate) {
    src.fail(search.path("slo"),
             "a search needs an SLO: metric limits such as {time_to_first_token: {p99: 500}} "
             "and/or error_rate");
  }
  return slo;
}

void read_search(const Section& load, LoadConfig& l) {
  const Section s = load.section("search", kSearchKeys);
  SearchConfig sc;
  s.read_enum("vary", sc.vary, kStageModeNames);
  const bool by_concurrency = sc.vary == LoadMode::kConcurrency;
  s.read("low", sc.low);
  s.read("high", sc.high);
  for (auto key : {"low", "high"}) {
    const double v = key == std::string_view("low") ? sc.low : sc.high;
    if (by_concurrency) {
      s.check(std::floor(v) == v && v >= 1, key,
              "must be a whole number of conversations, at least 1, got " + num(v));
    } else {
      s.check(v > 0, key, "must be greater than 0, got " + num(v));
    }
  }
  s.check(sc.low < sc.high, "low",
          "must be less than high (" + num(sc.high) + "), got " + num(sc.low));
  check_one_end(s, load.path("search"), kStepEnds, "a search step");
  s.read("step_duration_s", sc.step_duration_s);
  if (sc.step_duration_s) {
    s.check(*sc.step_duration_s > 0, "step_duration_s", "must be greater than 0");
  }
  s.read("step_requests", sc.step_requests);
  if (sc.step_requests) s.check(*sc.step_requests >= 1, "step_requests", "must be at least 1");
  s.read("precision", sc.precision);
  s.check(sc.precision > 0 && sc.precision < 1, "precision",
          "must be between 0 and 1 (exclusive): the bracket's width relative to high, got " +
              num(sc.precision));
  sc.slo = read_search_slo(s);
  read_settle(s, "settle_s", sc.settle_s);
  s.read("repeats", sc.repeats);
  s.check(sc.repeats >= 0 && sc.repeats <= kMaxSearchRepeats, "repeats",
          "must be a whole number from 0 to " + std::to_string(kMaxSearchRepeats) +
              " (more runs of a step within the SLO's noise), got " + std::to_string(sc.repeats));
  l.search = std::move(sc);
  l.stages.clear();
}

void read_abort_on(const Section& load, LoadConfig& l) {
  const Section s = load.section("abort_on", kAbortOnKeys);
  AbortOnConfig a;
  s.read("error_rate", a.error_rate);
  s.check(a.error_rate > 0 && a.error_rate <= 1, "error_rate",
          "must be greater than 0 and at most 1, got " + num(a.error_rate));
  s.read("window_s", a.window_s);
  s.check(a.window_s > 0, "window_s", "must be greater than 0, got " + num(a.window_s));
  s.read("min_requests", a.min_requests);
  s.check(a.min_requests >= 1, "min_requests",
          "must be at least 1, got " + std::to_string(a.min_requests));
  l.abort_on = a;
}

}  // namespace

void read_load_profile(const Section& s, LoadConfig& l) {
  const Source& src = s.source();
  s.read("warmup_s", l.warmup_s);
  if (l.warmup_s) {
    s.check(*l.warmup_s > 0, "warmup_s", "must be greater than 0, got " + num(*l.warmup_s));
    if (l.warmup_sessions > 0) {
      src.fail_at(s.path("warmup_s"), s.path("warmup_s"),
                  "warmup by time or by sessions, not both (load.warmup_sessions is " +
                      std::to_string(l.warmup_sessions) + ")");
    }
  }

  std::string profile_key;
  for (auto key : {"stages", "sweep", "search"}) {
    if (!given(s, key)) continue;
    if (!profile_key.empty()) {
      s.check(false, key,
              "load." + profile_key + " and load." + key +
                  " are exclusive: a run has one profile (stages, sweep or search)");
    }
    profile_key = key;
  }
  if (!profile_key.empty()) {
    s.check(l.mode != LoadMode::kTrace, "mode",
            "trace replays recorded timestamps and cannot run load." + profile_key);
    const std::string ends = profile_key == "search" ? "step_duration_s or step_requests"
                                                     : "duration_s, sessions or requests";
    for (auto key : kEnds) {
      s.check(!given(s, key), key,
              "not with load." + profile_key + ": each " +
                  (profile_key == "stages" ? "stage" : "step") + " ends by its own " + ends);
    }
  }
  l.stages.clear();
  l.sweep.reset();
  l.search.reset();
  l.profile = ProfileKind::kSingle;
  if (profile_key == "stages") {
    read_stages(s, l);
    l.profile = ProfileKind::kStages;
  } else if (profile_key == "sweep") {
    read_sweep(s, l);
    l.profile = ProfileKind::kSweep;
  } else if (profile_key == "search") {
    read_search(s, l);
    l.profile = ProfileKind::kSearch;
  }

  l.abort_on.reset();
  if (given(s, "abort_on")) read_abort_on(s, l);
}

// --- to_yaml ------------------------------------------------------------------------------

namespace {

std::string level_yaml(const LoadLevel& v) {
  if (!v.ramp) return num(v.from);
  return "{from: " + num(v.from) + ", to: " + num(v.to) + ", shape: " + to_string(v.shape) + "}";
}

template <class T>
std::string opt(const std::optional<T>& v) {
  if (!v) return "null";
  if constexpr (std::is_floating_point_v<T>) {
    return num(*v);
  } else {
    return std::to_string(*v);
  }
}

std::string ends_yaml(const std::optional<double>& duration_s,
                      const std::optional<int64_t>& sessions,
                      const std::optional<int64_t>& requests) {
  if (duration_s) return "duration_s: " + num(*duration_s);
  if (sessions) return "sessions: " + std::to_string(*sessions);
  return "requests: " + opt(requests);
}

std::string stage_yaml(const StageConfig& st) {
  std::string y = "{name: " + quote(st.name) + ", mode: " + to_string(st.mode);
  if (st.mode == LoadMode::kRate) {
    y += ", rate: " + level_yaml(st.rate) + ", concurrency: " + level_yaml(st.concurrency) +
         ", arrival: " + to_string(st.arrival) + ", burstiness: " + num(st.burstiness);
  } else {
    y += ", concurrency: " + level_yaml(st.concurrency);
  }
  return y + ", " + ends_yaml(st.duration_s, st.sessions, st.requests) +
         ", settle_s: " + num(st.settle_s) + "}";
}

std::string slo_yaml(const SloSpec& slo) {
  std::string y = "{";
  for (const auto& [metric, limits] : slo.limits) {
    y += (y.size() > 1 ? ", " : "") + metric + ": {";
    bool first = true;
    for (const auto& [stat, ms] : limits) {
      y += (first ? "" : ", ") + stat + ": " + num(ms);
      first = false;
    }
    y += "}";
  }
  if (slo.error_rate)
    y += (y.size() > 1 ? ", " : "") + std::string("error_rate: ") + num(*slo.error_rate);
  return y + "}";
}

}  // namespace

void load_profile_yaml(std::ostream& y, const LoadConfig& l) {
  // load.warmup writes its own end (and re-reading both would be refused as exclusive).
  y << "  warmup_s: " << (l.warmup ? "null" : opt(l.warmup_s)) << "\n";
  if (l.profile == ProfileKind::kStages) {
    y << "  stages:\n";
    for (const auto& st : l.stages) y << "    - " << stage_yaml(st) << "\n";
  } else {
    y << "  stages: null\n";
  }
  if (l.profile == ProfileKind::kSweep && l.sweep) {
    const SweepConfig& sw = *l.sweep;
    y << "  sweep:\n    " << to_string(sw.vary) << ": [";
    for (std::size_t i = 0; i < sw.values.size(); ++i) y << (i ? ", " : "") << num(sw.values[i]);
    y << "]\n"
      << "    duration_s: " << opt(sw.duration_s) << "\n"
      << "    sessions: " << opt(sw.sessions) << "\n"
      << "    requests: " << opt(sw.requests) << "\n"
      << "    settle_s: " << num(sw.settle_s) << "\n";
    y << "    # expands to the stages:\n";
    for (const auto& st : l.stages) y << "    #   - " << stage_yaml(st) << "\n";
  } else {
    y << "  sweep: null\n";
  }
  if (l.profile == ProfileKind::kSearch && l.search) {
    const SearchConfig& sc = *l.search;
    y << "  search:\n"
      << "    vary: " << to_string(sc.vary) << "\n"
      << "    low: " << num(sc.low) << "\n"
      << "    high: " << num(sc.high) << "\n"
      << "    step_duration_s: " << opt(sc.step_duration_s) << "\n"
      << "    step_requests: " << opt(sc.step_requests) << "\n"
      << "    precision: " << num(sc.precision) << "\n"
      << "    slo: " << slo_yaml(sc.slo) << "\n"
      << "    settle_s: " << num(sc.settle_s) << "\n"
      << "    repeats: " << sc.repeats << "\n";
  } else {
    y << "  search: null\n";
  }
  if (l.abort_on) {
    y << "  abort_on: {error_rate: " << num(l.abort_on->error_rate)
      << ", window_s: " << num(l.abort_on->window_s)
      << ", min_requests: " << l.abort_on->min_requests << "}\n";
  } else {
    y << "  abort_on: null\n";
  }
}

void add_load_profile_paths(std::vector<std::string>& paths) {
  for (auto k : kSweepKeys) paths.push_back("load.sweep." + std::string(k));
  for (auto k : kSearchKeys) paths.push_back("load.search." + std::string(k));
  for (auto k : kAbortOnKeys) paths.push_back("load.abort_on." + std::string(k));
}

}  // namespace convoy::config_detail
