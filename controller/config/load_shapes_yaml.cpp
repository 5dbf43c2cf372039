#include "controller/config/load_shapes_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

#include "common/duration.hpp"
#include "controller/config/config_keys.hpp"
#include "controller/config/limits.hpp"

namespace convoy {

int64_t user_gap_ns(const LoadConfig& l) {
  if (l.rate <= 0) return 0;
  return seconds_to_ns(static_cast<double>(l.concurrency) / l.rate);
}

namespace config_detail {

namespace {

using yaml_util::format_number;
using yaml_util::Section;

bool shape_given(const Section& s, std::string_view key) {
  const YAML::Node n = s.node(key);
  return n.IsDefined() && !n.IsNull();
}

// Exactly one of `a` and `b` given in `w`; the message says what the pair decides.
void one_of(const Section& load, const Section& w, const char* a, const char* b,
            const std::string& what) {
  const bool has_a = shape_given(w, a);
  const bool has_b = shape_given(w, b);
  if (has_a != has_b) return;
  load.check(false, "warmup",
             std::string("needs exactly one of ") + a + " or " + b + " (" + what + "), got " +
                 (has_a ? "both" : "neither"));
}

void read_warmup(const Section& s, LoadConfig& l) {
  const YAML::Node n = s.node("warmup");
  if (!n.IsDefined() || n.IsNull()) return;
  if (l.warmup_sessions > 0 || l.warmup_s) {
    const char* other = l.warmup_s ? "load.warmup_s" : "load.warmup_sessions";
    s.source().fail_at(s.path("warmup"), s.path("warmup"),
                       std::string("load.warmup and ") + other +
                           " are exclusive: load.warmup gives the warmup's level and its end "
                           "(duration_s or sessions); remove " +
                           other);
  }
  const Section w = s.section("warmup", config_keys::kWarmupKeys);
  one_of(s, w, "concurrency", "rate", "the warmup's own level");
  one_of(s, w, "duration_s", "sessions", "when the warmup ends");
  WarmupConfig warmup;
  w.read("concurrency", warmup.concurrency);
  if (warmup.concurrency) {
    w.check(*warmup.concurrency >= 1 && *warmup.concurrency <= limits::kMaxConcurrency,
            "concurrency",
            "must be between 1 and " + std::to_string(limits::kMaxConcurrency) + ", got " +
                std::to_string(*warmup.concurrency));
  }
  w.read("rate", warmup.rate);
  if (warmup.rate) {
    w.check(*warmup.rate >= limits::kMinRatePerS && *warmup.rate <= limits::kMaxRatePerS, "rate",
            "must be between " + format_number(limits::kMinRatePerS) + " and " +
                format_number(limits::kMaxRatePerS) + " conversations/s, got " +
                format_number(*warmup.rate));
  }
  w.read("duration_s", warmup.duration_s);
  if (warmup.duration_s) {
    w.check(*warmup.duration_s > 0 && *warmup.duration_s <= limits::kMaxDurationS, "duration_s",
            "must be greater than 0 and at most " + format_number(limits::kMaxDurationS) +
                " s, got " + format_number(*warmup.duration_s));
  }
  w.read("sessions", warmup.sessions);
  if (warmup.sessions) {
    w.check(*warmup.sessions >= 1 && *warmup.sessions <= limits::kMaxCount, "sessions",
            "must be between 1 and " + std::to_string(limits::kMaxCount) + ", got " +
                std::to_string(*warmup.sessions));
  }
  // Its end is the one warmup_sessions or warmup_s would give: the run's warmup path.
  l.warmup_sessions = warmup.sessions.value_or(0);
  l.warmup_s = warmup.duration_s;
  l.warmup = warmup;
}

void check_users(const Section& s, const LoadConfig& l) {
  if (l.mode != LoadMode::kUsers) return;
  s.check(l.profile == ProfileKind::kSingle, "mode",
          "users runs one level of load.concurrency users; it cannot run load.stages, sweep or "
          "search");
  s.check(l.rate > 0, "rate",
          "must be greater than 0 in users mode (the users' rate, AIPerf's --user-centric-rate: "
          "each user's gap is load.concurrency / load.rate seconds), got " +
              format_number(l.rate));
  const double gap_s = static_cast<double>(l.concurrency) / l.rate;
  s.check(gap_s <= limits::kMaxDurationS, "rate",
          "gives each user a gap of " + format_number(gap_s) +
              " s (load.concurrency / load.rate), "
              "more than " +
              format_number(limits::kMaxDurationS) + " s");
}

}  // namespace

void read_load_shapes(const Section& s, LoadConfig& l) {
  read_warmup(s, l);
  check_users(s, l);
  s.read("prefill_concurrency", l.prefill_concurrency);
  if (const auto& k = l.prefill_concurrency) {
    s.check(*k >= 1 && *k <= limits::kMaxConcurrency, "prefill_concurrency",
            "must be between 1 and " + std::to_string(limits::kMaxConcurrency) +
                " requests waiting for their first token, got " + std::to_string(*k));
  }
}

void check_prefill_share(const yaml_util::Source& src, const Config& c) {
  const auto& k = c.load.prefill_concurrency;
  const int workers = c.expected_workers();
  if (!k || *k >= workers) return;
  src.fail("load.prefill_concurrency",
           "is split across the workers and each needs a whole share: at least " +
               std::to_string(workers) + " (the workers), got " + std::to_string(*k));
}

void load_shapes_yaml(std::ostream& y, const LoadConfig& l) {
  if (l.warmup) {
    const WarmupConfig& w = *l.warmup;
    y << "  warmup: {";
    if (w.concurrency) y << "concurrency: " << *w.concurrency;
    if (w.rate) y << "rate: " << format_number(*w.rate);
    if (w.duration_s) y << ", duration_s: " << format_number(*w.duration_s);
    if (w.sessions) y << ", sessions: " << *w.sessions;
    y << "}\n";
  } else {
    y << "  warmup: null\n";
  }
  y << "  prefill_concurrency: "
    << (l.prefill_concurrency ? std::to_string(*l.prefill_concurrency) : "null") << "\n";
}

}  // namespace config_detail
}  // namespace convoy
