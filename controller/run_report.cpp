#include "controller/run_report.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "common/exit_codes.hpp"
#include "common/log.hpp"
#include "controller/insights.hpp"
#include "controller/report_html.hpp"
#include "controller/results_table.hpp"
#include "controller/schedule.hpp"
#include "controller/summary_writer.hpp"

#ifndef CONVOY_VERSION
#define CONVOY_VERSION "dev"
#endif

namespace convoy::controller {

namespace {

constexpr double kCpuWarnPercent = 85;
constexpr double kLagWarnMs = 10;
// With the rate check's 3 sigma, a correct schedule warns well under 1% of the time.
constexpr double kKsAlpha = 0.001;

std::string iso_time(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void put(Writer& w, const char* key, const std::string& v) {
  w.Key(key);
  w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
}
void put(Writer& w, const char* key, double v) {
  w.Key(key);
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}
void put(Writer& w, const char* key, int64_t v) {
  w.Key(key);
  w.Int64(v);
}
void put(Writer& w, const char* key, bool v) {
  w.Key(key);
  w.Bool(v);
}
void put_strings(Writer& w, const char* key, const std::vector<std::string>& v, size_t limit) {
  w.Key(key);
  w.StartArray();
  for (size_t i = 0; i < v.size() && i < limit; ++i) w.String(v[i].c_str());
  w.EndArray();
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

TimeSample::TimeSample(size_t capacity) : heap_(capacity, 0) {}

void TimeSample::add(int64_t t_ns) {
  if (count == 0 || t_ns < first_ns) first_ns = t_ns;
  if (count == 0 || t_ns > last_ns) last_ns = t_ns;
  ++count;
  if (heap_.empty()) return;
  const auto begin = heap_.begin();
  if (size_ < heap_.size()) {
    heap_[size_++] = t_ns;
    std::push_heap(begin, begin + static_cast<std::ptrdiff_t>(size_));
  } else if (t_ns < heap_.front()) {
    const auto end = begin + static_cast<std::ptrdiff_t>(size_);
    std::pop_heap(begin, end);  // the latest kept time moves to the back, where t_ns replaces it
    heap_[size_ - 1] = t_ns;
    std::push_heap(begin, end);
  }
}

std::vector<int64_t> TimeSample::samples() const {
  std::vector<int64_t> out(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(size_));
  std::sort(out.begin(), out.end());
  return out;
}

void RunFacts::add(const proto::Record& r) {
  if (r.phase != proto::Phase::kMeasure) return;
  ++total_requests;
  if (r.http_status > 0) any_response = true;
  if (r.error.kind == proto::ErrorKind::kConnect) ++connect_errors;
  if (r.turn_index == 0 && r.sent_ns > 0) actual_starts_ns.add(r.sent_ns);
  if (r.error.kind == proto::ErrorKind::kNone && r.turn_index > 0) {
    ++later_turn_requests;
    if (r.usage_from_server) later_turn_prompt_tokens += r.input_tokens;
    if (r.cached_tokens >= 0) {
      later_turn_cached_tokens += r.cached_tokens;
      ++later_turn_requests_reporting_cached;
    }
  }
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

void add_output_failure(Verdict& v, const OutputError& e) {
  v.status = "fail";
  v.reasons.push_back("output incomplete: " + describe(e));
}

Verdict judge_run(const ReportInputs& in) {
  Verdict v;
  auto warn = [&](std::string reason) {
    if (v.status == "pass") v.status = "warn";
    v.reasons.push_back(std::move(reason));
  };
  auto fail = [&](std::string reason) {
    v.status = "fail";
    v.reasons.push_back(std::move(reason));
  };
  const Config& c = in.config;
  const MetricsSnapshot& s = in.snapshot;
  if (in.incomplete) fail("the run could not complete: " + in.incomplete_reason);
  if (in.interrupted) warn("interrupted: results are partial");
  if (s.request_count + s.error_request_count == 0) {
    fail("no measured request completed");
  } else if (s.request_count == 0) {
    // Every measured request failed: nothing was measured, whatever fail_on says.
    fail("no measured request succeeded: all " + std::to_string(s.error_request_count) +
         " failed (see error_summary)");
  }
  for (const OutputError& e : in.output_errors) add_output_failure(v, e);
  if (c.fail_on.error_rate && s.error_rate() > *c.fail_on.error_rate) {
    fail("error rate " + fixed(s.error_rate() * 100, 2) + "% exceeds fail_on.error_rate " +
         fixed(*c.fail_on.error_rate * 100, 2) + "%");
  } else if (s.error_request_count > 0) {
    warn(std::to_string(s.error_request_count) + " request(s) failed (see error_summary)");
  }
  for (const auto& id : in.facts.lost_workers) {
    warn("worker " + id + " was lost during the run");
  }
  if (!in.facts.lost_conversations.empty()) {
    warn(std::to_string(in.facts.lost_conversations.size()) +
         " conversation(s) were lost with their worker");
  }
  if (!in.facts.failed_conversations.empty()) {
    warn(std::to_string(in.facts.failed_conversations.size()) +
         " conversation(s) could not be decoded by their worker and were never sent "
         "(run.failed_conversations)");
  }
  if (in.facts.forged_messages > 0) {
    warn(std::to_string(in.facts.forged_messages) +
         " result message(s) without a registered worker's token were dropped "
         "(run.forged_messages)");
  }
  for (const auto& [id, w] : in.registry.workers()) {
    if (w.max_cpu_percent > kCpuWarnPercent) {
      warn("worker " + id + " peaked at " + std::to_string(static_cast<int>(w.max_cpu_percent)) +
           "% CPU: the generator may have limited the load; add workers");
    }
    if (w.last_heartbeat.legacy_open_sessions > 0) {
      warn("worker " + id + " ended with " + std::to_string(w.last_heartbeat.legacy_open_sessions) +
           " legacy session(s) still open");
    }
  }
  if (const MetricStats* lag = s.find("schedule_lag"); lag && lag->count > 0) {
    if (lag->p(99) > kLagWarnMs) {
      warn("schedule_lag p99 " + fixed(lag->p(99), 3) +
           " ms: conversations started late; the intended load was not fully delivered");
    }
  }
  if (c.load.mode == LoadMode::kRate) {
    v.intended_rate_per_s = c.load.rate;
    const TimeSample& starts = in.facts.actual_starts_ns;
    if (starts.count > 1 && starts.last_ns > starts.first_ns) {
      // Against the spread of the arrival count, not the rate alone: a short poisson run is
      // often more than 5% off by chance (controller/schedule.hpp, check_arrival_rate).
      const RateCheck rc = check_arrival_rate(c.load.arrival, c.load.rate, c.load.burstiness,
                                              starts.count, starts.last_ns - starts.first_ns);
      v.achieved_rate_per_s = rc.achieved_per_s;
      if (rc.warn) {
        warn("achieved " + fixed(v.achieved_rate_per_s, 2) + " conversations/s vs " +
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
          warn("inter-arrival times do not match the configured " +
               std::string(to_string(c.load.arrival)) +
               " process (KS p=" + std::to_string(v.ks_p_value) + ")");
        }
      }
    }
  }
  return v;
}

namespace {

std::string run_json(const ReportInputs& in) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  put(w, "name", in.config.name);
  put(w, "convoy_version", std::string(CONVOY_VERSION));
  put(w, "protocol_version", static_cast<int64_t>(proto::kProtocolVersion));
  put(w, "target_url", in.url);
  put(w, "start", iso_time(in.facts.start_wall));
  put(w, "end", iso_time(in.facts.end_wall));
  put(w, "wall_duration_s",
      std::chrono::duration<double>(in.facts.end_wall - in.facts.start_wall).count());
  put(w, "interrupted", in.interrupted);
  put(w, "incomplete", in.incomplete);
  put(w, "incomplete_reason", in.incomplete_reason);
  put(w, "output_dir", in.out_dir.string());
  // The resolved configuration; it names the API key's variable, never the key.
  put(w, "config_yaml", to_yaml(in.config));
  put_strings(w, "lost_workers", in.facts.lost_workers, 1000);
  put(w, "lost_conversation_count", static_cast<int64_t>(in.facts.lost_conversations.size()));
  put_strings(w, "lost_conversations", in.facts.lost_conversations, 1000);
  put(w, "unfinished_conversation_count",
      static_cast<int64_t>(in.facts.unfinished_conversations.size()));
  put_strings(w, "unfinished_conversations", in.facts.unfinished_conversations, 1000);
  put(w, "failed_conversation_count", static_cast<int64_t>(in.facts.failed_conversations.size()));
  put_strings(w, "failed_conversations", in.facts.failed_conversations, 1000);
  put(w, "forged_messages", in.facts.forged_messages);
  put(w, "rejected_workers", in.facts.rejected_workers);
  w.EndObject();
  return sb.GetString();
}

std::string workers_json(const WorkerRegistry& registry) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartArray();
  for (const auto& [id, info] : registry.workers()) {
    w.StartObject();
    put(w, "worker_id", id);
    put(w, "host", info.host);
    put(w, "pid", info.pid);
    put(w, "state", std::string(to_string(info.state)));
    put(w, "records", info.records);
    put(w, "conversations_assigned", info.conversations_assigned);
    put(w, "clock_offset_ns", info.offset_ns());
    put(w, "clock_rtt_ns", info.best ? info.best->rtt_ns : int64_t{-1});
    put(w, "max_cpu_percent", info.max_cpu_percent);
    put(w, "max_rss_bytes", info.max_rss_bytes);
    put(w, "legacy_open_sessions", info.last_heartbeat.legacy_open_sessions);
    w.EndObject();
  }
  w.EndArray();
  return sb.GetString();
}

std::string verdict_json(const Verdict& v) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  put(w, "status", v.status);
  put_strings(w, "reasons", v.reasons, 1000);
  put(w, "intended_rate_per_s", v.intended_rate_per_s);
  put(w, "achieved_rate_per_s", v.achieved_rate_per_s);
  put(w, "ks_statistic", v.ks_statistic);
  put(w, "ks_p_value", v.ks_p_value);
  w.EndObject();
  return sb.GetString();
}

InsightInputs insight_inputs(const ReportInputs& in) {
  InsightInputs ii;
  ii.session_routing_mode = to_string(in.config.session_routing.mode);
  ii.target_url = in.config.target.url;
  ii.model = in.config.target.model;
  ii.max_completion_tokens = in.config.target.max_completion_tokens;
  ii.api_key_env = in.config.target.api_key_env;
  const char* key = in.config.target.api_key_env.empty()
                        ? nullptr
                        : std::getenv(in.config.target.api_key_env.c_str());
  ii.api_key_present = key && *key;
  ii.connection_refused_at_start = !in.facts.any_response && in.facts.connect_errors > 0;
  ii.total_requests = in.facts.total_requests;
  for (const auto& e : in.snapshot.errors) {
    ii.errors.push_back({e.code, e.type, e.message, e.count, e.example_correlation_ids, e.example});
  }
  ii.later_turn_requests = in.facts.later_turn_requests;
  ii.later_turn_prompt_tokens = in.facts.later_turn_prompt_tokens;
  ii.later_turn_cached_tokens = in.facts.later_turn_cached_tokens;
  ii.later_turn_requests_reporting_cached = in.facts.later_turn_requests_reporting_cached;
  return ii;
}

}  // namespace

int write_run_report(const ReportInputs& in) {
  const Verdict judged = judge_run(in);  // with in.output_errors
  std::vector<Insight> insights = detect_insights(insight_inputs(in));
  SummaryExtras extras;
  extras.run_json = run_json(in);
  extras.workers_json = workers_json(in.registry);
  extras.insights_json = insights_to_json(insights);
  // The files that carry the verdict are rendered from the failures known so far: a file that
  // cannot be written fails the verdict in the others (write_output_files re-renders them).
  auto verdict_for = [&](const std::vector<OutputError>& errors) {
    Verdict v = judged;
    for (size_t i = in.output_errors.size(); i < errors.size(); ++i) {
      add_output_failure(v, errors[i]);
    }
    return v;
  };
  auto extras_for = [&](const std::vector<OutputError>& errors) {
    SummaryExtras e = extras;
    e.verdict_json = verdict_json(verdict_for(errors));
    e.output_errors_json = output_errors_json(errors);
    return e;
  };
  std::vector<OutputFile> files;
  files.push_back({"summary.csv", [&](const auto&) { return summary_csv(in.snapshot); }});
  if (in.config.output.html) {
    files.push_back({"report.html", [&](const std::vector<OutputError>& errors) {
                       return report_html(in.snapshot, extras_for(errors));
                     }});
  }
  // Last: it lists every failure, including those of the files before it.
  files.push_back({"summary.json", [&](const std::vector<OutputError>& errors) {
                     return summary_json(in.snapshot, extras_for(errors));
                   }});
  const std::vector<OutputError> errors = write_output_files(in.out_dir, files, in.output_errors);
  const Verdict verdict = verdict_for(errors);
  const bool summary_written = std::none_of(
      errors.begin(), errors.end(), [](const OutputError& e) { return e.file == "summary.json"; });

  std::ostream& out = std::cout;
  out << "\n";
  print_results_table(out, in.snapshot);
  if (!in.snapshot.errors.empty()) {
    out << "\n";
    print_error_table(out, in.snapshot);
  }
  if (!insights.empty()) {
    out << "\n";
    print_insights(out, insights);
  }
  out << "\nVerdict: " << verdict.status;
  for (const auto& r : verdict.reasons) out << "\n  - " << r;
  if (summary_written) {
    out << "\nOutputs: " << in.out_dir.string() << "/summary.json\n";
  } else {
    out << "\nOutputs: incomplete, summary.json could not be written (see the errors)\n";
  }
  out.flush();
  for (const OutputError& e : errors) log_error(describe(e));
  if (!errors.empty()) return kExitIncomplete;
  return verdict.status == "fail" ? kExitCriterionFailed : kExitOk;
}

}  // namespace convoy::controller
