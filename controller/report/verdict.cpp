#include "controller/report/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace convoy::controller {

namespace {

constexpr double kCpuWarnPercent = 85;
constexpr double kLagWarnMs = 10;
// With the rate check's 3 sigma, a correct schedule warns well under 1% of the time.
constexpr double kKsAlpha = 0.001;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Regularized lower incomplete gamma P(a, x) (series for x < a+1, continued fraction beyond).
double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  const double gln = std::lgamma(a);
  if (x < a + 1) {
    double ap = a, sum = 1.0 / a, del = sum;
    for (int n = 0; n < 500; ++n) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (std::fabs(del) < std::fabs(sum) * 1e-12) break;
    }
    return sum * std::exp(-x + a * std::log(x) - gln);
  }
  double b = x + 1 - a, c = 1.0 / 1e-300, d = 1.0 / b, h = d;
  for (int i = 1; i < 500; ++i) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (std::fabs(c) < 1e-300) c = 1e-300;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-12) break;
  }
  return 1.0 - std::exp(-x + a * std::log(x) - gln) * h;
}

}  // namespace

RateCheck check_arrival_rate(Arrival arrival, double rate_per_s, double burstiness, int64_t starts,
                             int64_t span_ns) {
  RateCheck c;
  if (starts < 2 || span_ns <= 0 || rate_per_s <= 0) return c;
  c.computed = true;
  const double span_s = static_cast<double>(span_ns) / 1e9;
  c.observed_count = starts - 1;
  c.achieved_per_s = static_cast<double>(c.observed_count) / span_s;
  c.expected_count = rate_per_s * span_s;
  double spread = kConstantRateAllowance;
  if (arrival == Arrival::kPoisson) {
    spread = kRateSigmas * std::sqrt(c.expected_count);
  } else if (arrival == Arrival::kGamma) {
    // A gamma renewal process's count has variance mean / shape (its gaps' squared CV).
    spread = kRateSigmas * std::sqrt(c.expected_count / (burstiness > 0 ? burstiness : 1.0));
  }
  c.allowed_deviation = std::max(kRateToleranceFraction * c.expected_count, spread);
  const double deviation = std::fabs(static_cast<double>(c.observed_count) - c.expected_count);
  c.warn = starts >= kMinRateCheckStarts && deviation > c.allowed_deviation;
  return c;
}

double ks_statistic(std::vector<int64_t> gaps_ns, Arrival arrival, double rate_per_s,
                    double shape) {
  if (arrival == Arrival::kConstant || gaps_ns.size() < 20 || rate_per_s <= 0) return -1;
  std::sort(gaps_ns.begin(), gaps_ns.end());
  const double n = static_cast<double>(gaps_ns.size());
  const double mean_s = 1.0 / rate_per_s;
  double d = 0;
  for (size_t i = 0; i < gaps_ns.size(); ++i) {
    double x = static_cast<double>(gaps_ns[i]) / 1e9;
    double cdf = arrival == Arrival::kPoisson ? 1.0 - std::exp(-x / mean_s)
                                              : gamma_p(shape, x * shape / mean_s);
    double lo = static_cast<double>(i) / n, hi = static_cast<double>(i + 1) / n;
    d = std::max({d, std::fabs(cdf - lo), std::fabs(hi - cdf)});
  }
  return d;
}

double ks_p_value(double d, size_t n) {
  if (d < 0 || n == 0) return -1;
  const double sn = std::sqrt(static_cast<double>(n));
  const double lambda = (sn + 0.12 + 0.11 / sn) * d;
  // The series does not converge for tiny lambda, where the fit is perfect (Numerical Recipes).
  if (lambda < 0.3) return 1.0;
  double sum = 0;
  for (int k = 1; k <= 100; ++k) {
    double term = 2 * ((k % 2) ? 1 : -1) * std::exp(-2 * k * k * lambda * lambda);
    sum += term;
    if (std::fabs(term) < 1e-12) break;
  }
  return std::clamp(sum, 0.0, 1.0);
}

const char* to_string(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kPass:
      return "pass";
    case VerdictStatus::kWarn:
      return "warn";
    case VerdictStatus::kFail:
      return "fail";
  }
  return "unknown";
}

void add_output_failure(Verdict& v, const OutputError& e) {
  v.status = VerdictStatus::kFail;
  v.reasons.push_back("output incomplete: " + describe(e));
}

namespace {

void warn(Verdict& v, std::string reason) {
  if (v.status == VerdictStatus::kPass) v.status = VerdictStatus::kWarn;
  v.reasons.push_back(std::move(reason));
}

void fail(Verdict& v, std::string reason) {
  v.status = VerdictStatus::kFail;
  v.reasons.push_back(std::move(reason));
}

// Whether the run completed, measured anything, and stayed within fail_on.
void judge_outcome(Verdict& v, const ReportInputs& in) {
  const Config& c = in.config;
  const MetricsSnapshot& s = in.snapshot;
  if (in.incomplete) fail(v, "the run could not complete: " + in.incomplete_reason);
  if (in.interrupted) warn(v, "interrupted: results are partial");
  if (s.request_count + s.error_request_count == 0) {
    fail(v, "no measured request completed");
  } else if (s.request_count == 0) {
    // Every measured request failed: nothing was measured, whatever fail_on says.
    fail(v, "no measured request succeeded: all " + std::to_string(s.error_request_count) +
                " failed (see error_summary)");
  }
  for (const OutputError& e : in.output_errors) add_output_failure(v, e);
  if (c.fail_on.error_rate && s.error_rate() > *c.fail_on.error_rate) {
    fail(v, "error rate " + fixed(s.error_rate() * 100, 2) + "% exceeds fail_on.error_rate " +
                fixed(*c.fail_on.error_rate * 100, 2) + "%");
  } else if (s.error_request_count > 0) {
    warn(v, std::to_string(s.error_request_count) + " request(s) failed (see error_summary)");
  }
}

// Workers and conversations the run lost, could not send or dropped as forged.
void judge_losses(Verdict& v, const ReportInputs& in) {
  for (const auto& id : in.facts.lost_workers) {
    warn(v, "worker " + id + " was lost during the run");
  }
  if (!in.facts.lost_conversations.empty()) {
    warn(v, std::to_string(in.facts.lost_conversations.size()) +
                " conversation(s) were lost with their worker");
  }
  if (!in.facts.failed_conversations.empty()) {
    warn(v, std::to_string(in.facts.failed_conversations.size()) +
                " conversation(s) could not be decoded by their worker and were never sent "
                "(run.failed_conversations)");
  }
  if (in.facts.forged_messages > 0) {
    warn(v, std::to_string(in.facts.forged_messages) +
                " result message(s) without a registered worker's token were dropped "
                "(run.forged_messages)");
  }
  if (in.facts.malformed_records > 0) {
    warn(v, std::to_string(in.facts.malformed_records) +
                " malformed record(s) from authenticated workers were dropped, in no metric (" +
                in.facts.malformed_example + "; run.malformed_records)");
  }
  for (const WorkerSummary& w : in.workers) {
    const std::string& id = w.id;
    if (w.max_cpu_percent > kCpuWarnPercent) {
      warn(v, "worker " + id + " peaked at " + std::to_string(static_cast<int>(w.max_cpu_percent)) +
                  "% CPU: the generator may have limited the load; add workers");
    }
    if (w.legacy_open_sessions > 0) {
      warn(v, "worker " + id + " ended with " + std::to_string(w.legacy_open_sessions) +
                  " legacy session(s) still open");
    }
  }
}

void judge_lag(Verdict& v, const MetricsSnapshot& s) {
  if (const MetricStats* lag = s.find("schedule_lag"); lag && lag->count > 0) {
    if (lag->p(99) > kLagWarnMs) {
      warn(v, "schedule_lag p99 " + fixed(lag->p(99), 3) +
                  " ms: conversations started late; the intended load was not fully delivered");
    }
  }
}

// Whether the intended load was delivered: schedule lag, and in mode rate the arrival count and
// the inter-arrival distribution.
void judge_schedule(Verdict& v, const ReportInputs& in) {
  const Config& c = in.config;
  judge_lag(v, in.snapshot);
  // With a load profile the top-level rate is only a default: the whole run's arrivals follow
  // the stages, not one process, so the rate and KS checks do not apply to them.
  if (c.load.mode == LoadMode::kRate && c.load.profile == ProfileKind::kSingle) {
    v.intended_rate_per_s = c.load.rate;
    const TimeSample& starts = in.facts.actual_starts_ns;
    if (starts.count > 1 && starts.last_ns > starts.first_ns) {
      // Against the spread of the arrival count, not the rate alone: a short poisson run is
      // often more than 5% off by chance (check_arrival_rate above).
      const RateCheck rc = check_arrival_rate(c.load.arrival, c.load.rate, c.load.burstiness,
                                              starts.count, starts.last_ns - starts.first_ns);
      v.achieved_rate_per_s = rc.achieved_per_s;
      if (rc.warn) {
        warn(v, "achieved " + fixed(v.achieved_rate_per_s, 2) + " conversations/s vs " +
                    fixed(c.load.rate, 2) + " intended (" + std::to_string(rc.observed_count) +
                    " arrivals where " + fixed(rc.expected_count, 1) + " +- " +
                    fixed(rc.allowed_deviation, 1) + " were expected)");
      }
      std::vector<int64_t> sorted = starts.samples();
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> gaps;
      for (size_t i = 1; i < sorted.size(); ++i) gaps.push_back(sorted[i] - sorted[i - 1]);
      v.ks_statistic = ks_statistic(gaps, c.load.arrival, c.load.rate, c.load.burstiness);
      if (v.ks_statistic >= 0) {
        v.ks_p_value = ks_p_value(v.ks_statistic, gaps.size());
        if (v.ks_p_value < kKsAlpha) {
          warn(v, "inter-arrival times do not match the configured " +
                      std::string(to_string(c.load.arrival)) +
                      " process (KS p=" + std::to_string(v.ks_p_value) + ")");
        }
      }
    }
  }
}

// Load profiles: the circuit breaker's trip fails the run; settle requests are counted.
void judge_profile(Verdict& v, const ReportInputs& in) {
  v.settle_requests = in.facts.settle_requests;
  if (in.facts.aborted_reason) {
    v.aborted_reason = in.facts.aborted_reason;
    fail(v, "aborted by load.abort_on: " + *in.facts.aborted_reason);
  }
  // A capacity search: no answer when even `low` misses the SLO; only a lower bound
  // when `high` still meets it. An interrupted search claims nothing of a step it never judged.
  if (const auto& s = in.facts.search; s && !s->complete && !s->min_failing) {
    warn(v, "capacity search interrupted after " + std::to_string(s->steps.size()) +
                " judged step(s): " +
                (s->max_meeting_slo ? "the highest load that met the SLO so far is " +
                                          fixed(*s->max_meeting_slo, 2) + "; no step failed yet"
                                    : std::string("no step met the SLO yet")));
  } else if (s && !s->steps.empty()) {
    if (!s->max_meeting_slo) {
      fail(v, "capacity search: even load.search.low (" + fixed(s->config.low, 2) +
                  ") missed the SLO");
    } else if (!s->min_failing) {
      warn(v, "capacity search: load.search.high (" + fixed(s->config.high, 2) +
                  ") still met the SLO; the capacity is higher");
    }
  }
}

}  // namespace

Verdict judge_run(const ReportInputs& in) {
  Verdict v;
  judge_outcome(v, in);
  judge_losses(v, in);
  judge_schedule(v, in);
  judge_profile(v, in);
  // The stages that did not pass are named here, at the top: a sweep's bad step must not hide
  // in the stage table below a run-wide verdict.
  std::string flagged;
  for (const StageFacts& st : in.facts.stages) {
    const Verdict sv = judge_stage(st);
    if (sv.status == VerdictStatus::kPass) continue;
    flagged += (flagged.empty() ? "" : "; ") + st.config.name + " " + to_string(sv.status) +
               (sv.reasons.empty() ? "" : ": " + sv.reasons.front());
  }
  if (!flagged.empty()) warn(v, "stage(s) not clean: " + flagged);
  return v;
}

Verdict judge_stage(const StageFacts& stage) {
  Verdict v;
  const MetricsSnapshot& s = stage.metrics;
  if (s.request_count + s.error_request_count == 0) {
    fail(v, "no measured request of this stage completed");
  } else if (s.request_count == 0) {
    fail(v, "no request of this stage succeeded: all " + std::to_string(s.error_request_count) +
                " failed");
  } else if (s.error_request_count > 0) {
    warn(v, std::to_string(s.error_request_count) + " request(s) failed (" +
                fixed(s.error_rate() * 100, 2) + "%)");
  }
  judge_lag(v, s);
  v.slo_met = stage.slo_met;
  v.slo_failures = stage.slo_failures;
  return v;
}

}  // namespace convoy::controller
