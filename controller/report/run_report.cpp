#include "controller/report/run_report.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <span>

#include "common/build_info.hpp"
#include "common/exit_codes.hpp"
#include "common/log.hpp"
#include "common/redact.hpp"
#include "controller/report/aiperf_export.hpp"
#include "controller/report/headline.hpp"
#include "controller/report/insights.hpp"
#include "controller/report/model_results.hpp"
#include "controller/report/report_html.hpp"
#include "controller/report/results_table.hpp"
#include "controller/report/server_insights.hpp"
#include "controller/report/server_section.hpp"
#include "controller/report/summary_keys.hpp"
#include "controller/report/summary_writer.hpp"
#include "controller/report/timeslice.hpp"

namespace convoy::controller {

namespace {

std::string iso_time(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

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
}  // namespace

namespace {

std::string run_json(const ReportInputs& in) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  put(w, summary_key::kName, in.config.name);
  put(w, summary_key::kConvoyVersion, std::string(build_info::version()));
  put(w, "git_commit", std::string(build_info::git_commit()));
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
  put(w, summary_key::kConfigYaml, to_yaml(in.config));
  put_strings(w, "lost_workers", in.facts.lost_workers, 1000);
  put(w, "lost_conversation_count", static_cast<int64_t>(in.facts.lost_conversations.size()));
  put_strings(w, "lost_conversations", in.facts.lost_conversations, 1000);
  put(w, "unfinished_conversation_count",
      static_cast<int64_t>(in.facts.unfinished_conversations.size()));
  put_strings(w, "unfinished_conversations", in.facts.unfinished_conversations, 1000);
  put(w, "failed_conversation_count", static_cast<int64_t>(in.facts.failed_conversations.size()));
  put_strings(w, "failed_conversations", in.facts.failed_conversations, 1000);
  put(w, "forged_messages", in.facts.forged_messages);
  put(w, "malformed_records", in.facts.malformed_records);
  put(w, "rejected_workers", in.facts.rejected_workers);
  put(w, "profile", std::string(to_string(in.config.load.profile)));
  w.Key("session_routing");  // the mode configured and run, auto's detection, the ledger
  const std::string sessions = in.facts.sessions.json();
  w.RawValue(sessions.c_str(), sessions.size(), rapidjson::kObjectType);
  w.EndObject();
  return sb.GetString();
}

std::string workers_json(const std::vector<WorkerSummary>& workers) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartArray();
  for (const WorkerSummary& info : workers) {
    w.StartObject();
    put(w, "worker_id", info.id);
    put(w, "host", info.host);
    put(w, "pid", info.pid);
    put(w, "state", info.state);
    put(w, "records", info.records);
    put(w, "conversations_assigned", info.conversations_assigned);
    put(w, "clock_offset_ns", info.clock_offset_ns);
    put(w, "clock_rtt_ns", info.clock_rtt_ns);
    put(w, "max_cpu_percent", info.max_cpu_percent);
    put(w, "max_rss_bytes", info.max_rss_bytes);
    put(w, "legacy_open_sessions", info.legacy_open_sessions);
    w.EndObject();
  }
  w.EndArray();
  return sb.GetString();
}

std::string verdict_json(const Verdict& v) {
  rapidjson::StringBuffer sb;
  Writer w(sb);
  w.StartObject();
  put(w, "status", std::string(to_string(v.status)));
  put_strings(w, "reasons", v.reasons, 1000);
  put(w, "intended_rate_per_s", v.intended_rate_per_s);
  put(w, "achieved_rate_per_s", v.achieved_rate_per_s);
  put(w, "ks_statistic", v.ks_statistic);
  put(w, "ks_p_value", v.ks_p_value);
  // Load profiles: requests intended inside a settle window are in no metric; the breaker's why.
  put(w, "settle_requests", v.settle_requests);
  w.Key("aborted_reason");
  if (v.aborted_reason) {
    w.String(v.aborted_reason->c_str(), static_cast<rapidjson::SizeType>(v.aborted_reason->size()));
  } else {
    w.Null();
  }
  w.EndObject();
  return sb.GetString();
}

InsightInputs insight_inputs(const ReportInputs& in) {
  InsightInputs ii;
  ii.session_routing_mode = in.config.session_routing.mode;
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
  add_session_routing_inputs(in.config, in.snapshot, &ii);  // affinity, frontends, rejections
  add_server_inputs(in.snapshot, in.facts.server, &ii);
  return ii;
}

// summary.json's sections but the verdict and output errors (rendered per pass).
SummaryExtras summary_extras(const ReportInputs& in, const std::vector<Insight>& insights) {
  SummaryExtras extras;
  extras.run_json = run_json(in);
  extras.workers_json = workers_json(in.workers);
  extras.insights_json = insights_to_json(insights);
  extras.profile = in.config.load.profile;
  extras.stages = in.facts.stages;
  extras.search = in.facts.search ? &*in.facts.search : nullptr;
  extras.measure_start_ns = in.facts.measure_start_ns;
  extras.server = in.facts.server;  // built once by the telemetry room
  // The top-level provenance, as AIPerf's export has it (the same there).
  extras.benchmark_id = make_benchmark_id();
  extras.start_time = iso_time_ms(in.facts.start_wall);
  extras.end_time = iso_time_ms(in.facts.end_wall);
  // Ctrl-C, or load.abort_on's circuit breaker (its reason is verdict.aborted_reason): either
  // way the run was cut short of its profile.
  extras.was_cancelled = in.interrupted || in.facts.aborted_reason.has_value();
  return extras;
}

// timeslices.csv (output.slice_s) and AIPerf's profile_export_aiperf.json / .csv
// (output.aiperf_export; its profile_export.jsonl is streamed by the run). Each a file of the
// run's outputs, so a failure to write one is exit 3 naming it.
void add_slice_and_aiperf_files(const ReportInputs& in, const SummaryExtras& extras,
                                std::vector<OutputFile>& files) {
  if (in.config.output.slice_s) {
    files.push_back(
        {"timeslices.csv", [&](const auto&) { return timeslices_csv(in.snapshot.timeslices); }});
  }
  if (!in.config.output.aiperf_export) return;
  AiperfProvenance p{extras.benchmark_id, extras.start_time, extras.end_time, extras.was_cancelled};
  files.push_back({kAiperfJsonFile, [&in, p](const auto&) {
                     std::vector<StageConfig> ran;  // a search's steps exist only as run
                     for (const StageFacts& st : in.facts.stages) ran.push_back(st.config);
                     return aiperf_profile_json(in.snapshot, in.config, p, in.url, &ran);
                   }});
  files.push_back({kAiperfCsvFile, [&](const auto&) { return aiperf_profile_csv(in.snapshot); }});
}

// The console report up to the verdict, answer first: the headline, then a profile's own table
// (the run-wide one pools every stage and comes after it), the results, server, errors and
// insights, each within the console's width.
void print_console_tables(std::ostream& out, const ReportInputs& in, const Headline& headline,
                          const Verdict& verdict, const std::vector<Insight>& insights) {
  const size_t width = console_width();
  out << "\n";
  const std::span<const StageFacts> stages = in.facts.stages;
  print_headline(out, in.config.name, headline, verdict, width);
  if (!stages.empty()) {
    out << "\n";
    print_stage_table(out, stages, width);
    if (in.facts.search) print_search_result(out, *in.facts.search);
  }
  out << "\n";
  if (!stages.empty()) out << "All stages pooled:\n";
  print_results_table(out, in.snapshot, width);
  if (!in.snapshot.models.empty()) {
    out << "\n";
    print_model_table(out, in.snapshot, width);
  }
  if (in.facts.server) {
    out << "\n";
    print_server_table(out, in.facts.server->view, width);
  }
  if (!in.snapshot.errors.empty()) {
    out << "\n";
    print_error_table(out, in.snapshot, width);
  }
  if (!insights.empty()) {
    out << "\n";
    print_insights(out, insights, width);
  }
}

}  // namespace

int write_run_report(const ReportInputs& in) {
  const Verdict judged = judge_run(in);  // with in.output_errors
  std::vector<Insight> insights = detect_insights(insight_inputs(in));
  SummaryExtras extras = summary_extras(in, insights);
  // The headline's verdict line is re-rendered per pass from the verdict it is given.
  const auto headline = std::make_shared<const Headline>(
      make_headline(in.config, in.url, in.snapshot, judged, insights, in.facts.stages,
                    in.facts.search ? &*in.facts.search : nullptr));
  extras.headline = headline;
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
  files.push_back(
      {"summary.csv", [&](const auto&) { return summary_csv(in.snapshot, in.facts.stages); }});
  add_slice_and_aiperf_files(in, extras, files);  // timeslices.csv, AIPerf's export
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
  print_console_tables(out, in, *headline, verdict, insights);
  out << "\nVerdict: " << to_string(verdict.status) << '\n';
  for (const auto& r : verdict.reasons) out << wrap_at_spaces("  - ", r, console_width());
  if (verdict.settle_requests > 0) {
    out << "  (" << verdict.settle_requests
        << " request(s) intended in settle windows are in no metric)\n";
  }
  if (summary_written) {
    out << "Outputs: " << in.out_dir.string() << "/summary.json\n";
  } else {
    out << "Outputs: incomplete, summary.json could not be written (see the errors)\n";
  }
  out.flush();
  for (const OutputError& e : errors) log_error(describe(e));
  if (!errors.empty()) return kExitIncomplete;
  return verdict.status == VerdictStatus::kFail ? kExitCriterionFailed : kExitOk;
}

Config with_urls_redacted(Config config) {
  config.target.url = redact_url(config.target.url);
  for (auto& u : config.target.urls) u = redact_url(u);
  for (auto& e : config.telemetry.endpoints) e.url = redact_url(e.url);
  return config;
}

}  // namespace convoy::controller
