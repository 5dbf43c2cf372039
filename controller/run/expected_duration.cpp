#include "controller/run/expected_duration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "controller/config/yaml_util.hpp"
#include "controller/run/capacity_search.hpp"

namespace convoy::controller {

namespace {

// A figure for text: 2.5 stays 2.5, 30 stays 30.
std::string plain_number(double v) { return yaml_util::format_number(v); }

// What the parts of a run add up to while they are being summed.
struct DurationParts {
  double timed_min_s = 0;  // time-bound parts at their shortest
  double timed_max_s = 0;  // and at their longest (a search's most steps)
  double settle_max_s = 0;
  double drain_max_s = 0;
  std::vector<std::string> counted;
  std::vector<std::string> detail;
  int steps_min = 0;
  int steps_max = 0;

  void add_timed(double s) {
    timed_min_s += s;
    timed_max_s += s;
  }
};

// The fewest and most steps a search takes when its answer lies inside the bracket (low met,
// high missed), over every sequence of outcomes of the midpoints. Run on CapacitySearch itself,
// so that the count cannot drift from what the run does.
//
// vary: rate bisects exactly: after k midpoints the bracket is (high - low) / 2^k wide whatever
// the outcomes, and the search stops once that width over the bracket's top is within
// precision. Every midpoint meeting keeps the top at high (the fewest steps); every one missing
// brings it down toward low (the most). vary: concurrency rounds each midpoint down to a whole
// slot count, which breaks that order, so the steps of every outcome are counted (memoized on
// the bracket: at most a few per slot count between low and high).
struct StepRange {
  int fewest = 0;
  int most = 0;
};

int search_path_steps(CapacitySearch s, bool midpoints_meet) {
  constexpr int kGuard = 100000;  // the bisection ends far sooner; no input may loop here
  while (auto value = s.next()) {
    s.record(*value, s.steps() == 0 || (s.steps() >= 2 && midpoints_meet));
    if (s.steps() >= kGuard) break;
  }
  return s.steps();
}

// The steps still to come from `s` (past its first two), fewest and most.
StepRange remaining_steps(const CapacitySearch& s,
                          std::map<std::pair<double, double>, StepRange>& memo) {
  const auto next = s.next();
  if (!next) return {};
  const std::pair<double, double> key{s.max_meeting_slo().value_or(0), s.min_failing().value_or(0)};
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  CapacitySearch met = s;
  met.record(*next, true);
  CapacitySearch missed = s;
  missed.record(*next, false);
  const StepRange a = remaining_steps(met, memo);
  const StepRange b = remaining_steps(missed, memo);
  const StepRange r{1 + std::min(a.fewest, b.fewest), 1 + std::max(a.most, b.most)};
  memo.emplace(key, r);
  return r;
}

StepRange search_step_range(const SearchConfig& search) {
  if (search.vary == LoadMode::kRate) {
    return {search_path_steps(CapacitySearch(search), true),
            search_path_steps(CapacitySearch(search), false)};
  }
  CapacitySearch s(search);
  for (const bool met : {true, false}) {  // low meets, high misses
    if (auto value = s.next()) s.record(*value, met);
  }
  std::map<std::pair<double, double>, StepRange> memo;
  const StepRange rest = remaining_steps(s, memo);
  return {s.steps() + rest.fewest, s.steps() + rest.most};
}

// The dataset's conversations: counted by the caller (the file's rows), or the config's count.
std::optional<uint64_t> dataset_size(const Config& c, std::optional<uint64_t> counted) {
  if (counted) return counted;
  if (c.dataset.type == DatasetType::kSynthetic || c.dataset.conversations_set) {
    return static_cast<uint64_t>(c.dataset.conversations);
  }
  return std::nullopt;
}

// load.mode users bound by a count: each user's turns are a gap apart after the previous ended,
// so S conversations of T turns over N users take at least S x T / N gaps (plus the requests'
// own time). T is known for a synthetic dataset only. False: not this case.
bool add_users(const Config& c, std::optional<uint64_t> conversations, DurationParts& p) {
  const LoadConfig& l = c.load;
  if (l.mode != LoadMode::kUsers || l.duration_s || l.requests) return false;
  const std::optional<uint64_t> count =
      l.sessions ? std::optional<uint64_t>(static_cast<uint64_t>(*l.sessions)) : conversations;
  const double gap_s = static_cast<double>(user_gap_ns(l)) / 1e9;
  const std::string users = std::to_string(l.concurrency) + " users, each request " +
                            human_seconds(gap_s) + " after the user's previous one ended";
  if (count && c.dataset.type == DatasetType::kSynthetic) {
    const double turns = std::max(1.0, c.dataset.turns.mean);
    const double s =
        static_cast<double>(*count) * turns / static_cast<double>(l.concurrency) * gap_s;
    p.add_timed(s);
    p.detail.push_back(users + " (load.mode users): at least " + std::to_string(*count) +
                       " conversations x " + plain_number(turns) + " turns / " +
                       std::to_string(l.concurrency) + " users gaps, plus the requests' own time");
  } else {
    const std::string n = count ? std::to_string(*count) + " " : "";
    p.counted.push_back("until the " + n + "conversations have run (" + users +
                        ", load.mode users)");
  }
  p.drain_max_s = l.grace_s;
  return true;
}

void add_single(const Config& c, std::optional<uint64_t> conversations, DurationParts& p) {
  const LoadConfig& l = c.load;
  const bool rate = l.mode == LoadMode::kRate;
  if (add_users(c, conversations, p)) return;
  if (l.duration_s) {
    p.add_timed(*l.duration_s);
    p.detail.push_back(human_seconds(*l.duration_s) + " of load (load.duration_s)");
  } else if (l.requests) {
    p.counted.push_back("until " + std::to_string(*l.requests) +
                        " requests are sent and answered (load.requests)");
    return;  // no drain: the run ends when the last of them was answered
  } else if (l.sessions && rate && l.rate > 0) {
    const double s = static_cast<double>(*l.sessions) / l.rate;
    p.add_timed(s);
    p.detail.push_back(std::to_string(*l.sessions) + " conversations started at " +
                       plain_number(l.rate) + "/s (load.sessions, load.rate)");
  } else if (l.sessions) {
    p.counted.push_back("until " + std::to_string(*l.sessions) +
                        " conversations have started (load.sessions)");
  } else if (l.mode == LoadMode::kTrace) {
    p.counted.push_back("as long as the trace's timestamps span (load.mode trace)");
  } else if (rate && l.rate > 0 && conversations) {
    const double s = static_cast<double>(*conversations) / l.rate;
    p.add_timed(s);
    p.detail.push_back(std::to_string(*conversations) + " conversations started at " +
                       plain_number(l.rate) + "/s (the dataset's, load.rate)");
  } else {
    const std::string n = conversations ? std::to_string(*conversations) + " " : "";
    p.counted.push_back("until the dataset's " + n +
                        "conversations have run (no load.duration_s, load.requests or "
                        "load.sessions)");
  }
  p.drain_max_s = l.grace_s;
}

// load.stages or load.sweep: every stage is resolved in LoadConfig::stages.
void add_stages(const Config& c, DurationParts& p) {
  const LoadConfig& l = c.load;
  const bool sweep = l.profile == ProfileKind::kSweep;
  const char* what = sweep ? "steps" : "stages";
  double timed = 0;
  int timed_count = 0;
  int settles = 0;
  for (const StageConfig& st : l.stages) {
    if (st.duration_s) {
      timed += *st.duration_s;
      ++timed_count;
    } else if (st.requests) {
      p.counted.push_back("'" + st.name + "' until " + std::to_string(*st.requests) +
                          " requests are sent");
    } else if (st.sessions) {
      p.counted.push_back("'" + st.name + "' until " + std::to_string(*st.sessions) +
                          " conversations have started");
    }
    p.settle_max_s += st.settle_s;
    if (st.settle_s > 0) ++settles;
  }
  p.add_timed(timed);
  const std::size_t n = l.stages.size();
  if (sweep && l.sweep && l.sweep->duration_s) {
    p.detail.push_back(std::to_string(n) + " steps of " + human_seconds(*l.sweep->duration_s));
  } else if (timed_count > 0) {
    p.detail.push_back(std::to_string(timed_count) + " timed " + what + " (" +
                       human_seconds(timed) + " in all)");
  }
  if (settles > 0) {
    p.detail.push_back(std::to_string(settles) + (settles == 1 ? " settle (" : " settles (") +
                       human_seconds(p.settle_max_s) + " at most)");
  }
  p.drain_max_s = l.grace_s;
}

void add_search(const Config& c, DurationParts& p) {
  const LoadConfig& l = c.load;
  const SearchConfig& s = *l.search;
  const StepRange range = search_step_range(s);
  p.steps_min = range.fewest;
  p.steps_max = std::max(range.fewest, range.most);
  // After each step the search waits for the step's in-flight work (at most load.grace_s), or
  // search.settle_s when longer, before it judges the step.
  const double settle_s = std::max(s.settle_s, l.grace_s);
  // A step whose result lies within the SLO's noise runs again, up to search.repeats times.
  const int runs_max = 1 + static_cast<int>(s.repeats);
  p.settle_max_s = settle_s * p.steps_max * runs_max;
  const std::string steps =
      std::to_string(p.steps_min) + " to " + std::to_string(p.steps_max) + " steps";
  const std::string fewer = " (fewer when low already misses the SLO or high meets it)";
  if (s.step_duration_s) {
    p.timed_min_s += p.steps_min * *s.step_duration_s;
    p.timed_max_s += p.steps_max * runs_max * *s.step_duration_s;
    p.detail.push_back(steps + " of " + human_seconds(*s.step_duration_s) + fewer);
  } else if (s.step_requests) {
    p.counted.push_back(steps + ", each until " + std::to_string(*s.step_requests) +
                        " requests are sent" + fewer);
  }
  p.detail.push_back("a wait of up to " + human_seconds(settle_s) +
                     " after each step (load.grace_s or search.settle_s)");
  if (s.repeats > 0) {
    p.detail.push_back("a step within the SLO's noise run up to " + std::to_string(runs_max) +
                       " times (search.repeats)");
  }
}

// load.trials: the whole profile N times; the parts bound by a count are per trial.
void scale_by_trials(const LoadConfig& l, ExpectedDuration& e) {
  if (l.trials <= 1) return;
  const auto n = static_cast<double>(l.trials);
  e.min_s *= n;
  e.max_s *= n;
  for (auto& c : e.counted) c = "each of " + std::to_string(l.trials) + " trials: " + c;
  e.detail = std::to_string(l.trials) + " trials (load.trials), each: " + e.detail;
}

// The warmup: by time, or by count (timed when it runs at a rate of its own: load.warmup).
void add_warmup(const LoadConfig& l, DurationParts& p) {
  const std::optional<double> rate = l.warmup ? l.warmup->rate : std::nullopt;
  std::string level;
  if (rate) {
    level = " at " + plain_number(*rate) + " conversations/s (load.warmup)";
  } else if (l.warmup && l.warmup->concurrency) {
    level = " at concurrency " + std::to_string(*l.warmup->concurrency) + " (load.warmup)";
  }
  if (l.warmup_s) {
    p.add_timed(*l.warmup_s);
    p.detail.push_back("warmup " + human_seconds(*l.warmup_s) + level);
  } else if (l.warmup_sessions > 0 && rate) {
    const double s = static_cast<double>(l.warmup_sessions) / *rate;
    p.add_timed(s);
    p.detail.push_back("a warmup of " + std::to_string(l.warmup_sessions) + " conversations" +
                       level + ", " + human_seconds(s));
  } else if (l.warmup_sessions > 0) {
    p.counted.push_back("a warmup of " + std::to_string(l.warmup_sessions) + " conversations" +
                        level);
  }
}

}  // namespace

std::string human_seconds(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 10 && s != std::floor(s)) return plain_number(std::round(s * 10) / 10) + " s";
  const auto total = static_cast<int64_t>(std::llround(s));
  const int64_t h = total / 3600;
  const int64_t m = total % 3600 / 60;
  const int64_t sec = total % 60;
  if (h > 0) {
    const int64_t min = (total + 30) % 3600 / 60;  // to the minute from one hour
    const int64_t hours = (total + 30) / 3600;
    return std::to_string(hours) + " h" + (min > 0 ? " " + std::to_string(min) + " min" : "");
  }
  if (m > 0) return std::to_string(m) + " min" + (sec > 0 ? " " + std::to_string(sec) + " s" : "");
  return std::to_string(sec) + " s";
}

ExpectedDuration expected_duration(const Config& config,
                                   std::optional<uint64_t> dataset_conversations) {
  const LoadConfig& l = config.load;
  DurationParts p;
  add_warmup(l, p);
  switch (l.profile) {
    case ProfileKind::kSingle:
      add_single(config, dataset_size(config, dataset_conversations), p);
      break;
    case ProfileKind::kStages:
    case ProfileKind::kSweep:
      add_stages(config, p);
      break;
    case ProfileKind::kSearch:
      add_search(config, p);
      break;
  }
  if (const auto& k = l.prefill_concurrency) {
    p.detail.push_back("at most " + std::to_string(*k) +
                       " requests waiting for a first token (load.prefill_concurrency): a slow "
                       "prefill stretches the parts bound by a count");
  }
  if (p.drain_max_s > 0) {
    p.detail.push_back("up to " + human_seconds(p.drain_max_s) +
                       " for the last requests to finish (load.grace_s)");
  }
  ExpectedDuration e;
  e.min_s = p.timed_min_s;
  e.max_s = p.timed_max_s + p.settle_max_s + p.drain_max_s;
  e.counted = std::move(p.counted);
  e.steps_min = p.steps_min;
  e.steps_max = p.steps_max;
  for (const auto& d : p.detail) e.detail += (e.detail.empty() ? "" : ", ") + d;
  scale_by_trials(l, e);
  return e;
}

std::string expected_duration_line(const Config& config,
                                   std::optional<uint64_t> dataset_conversations) {
  const ExpectedDuration e = expected_duration(config, dataset_conversations);
  std::string counted;
  for (const auto& c : e.counted) counted += (counted.empty() ? "" : "; ") + c;
  const std::string detail = e.detail.empty() ? "" : " (" + e.detail + ")";
  std::string line = "expected duration: ";
  if (e.min_s <= 0 && !counted.empty()) return line + counted + ": not bound by time" + detail;
  if (e.max_s - e.min_s < 0.5) {
    line += human_seconds(e.min_s);
  } else if (e.min_s <= 0) {
    line += "at most " + human_seconds(e.max_s);
  } else {
    line += "between " + human_seconds(e.min_s) + " and " + human_seconds(e.max_s);
  }
  line += detail;
  if (!counted.empty()) line += ", plus the parts bound by a count: " + counted;
  return line;
}

}  // namespace convoy::controller
