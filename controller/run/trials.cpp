#include "controller/run/trials.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/log.hpp"
#include "controller/report/run_report.hpp"
#include "controller/report/summary_writer.hpp"
#include "controller/report/trials_summary.hpp"
#include "controller/run/output_dir.hpp"

namespace convoy::controller {

namespace {

namespace fs = std::filesystem;

// A finished trial's figures, from the summary.json it wrote.
void read_trial(const fs::path& folder, TrialResult& r) {
  std::ifstream in(folder / "summary.json", std::ios::binary);
  if (!in) {
    r.included = false;
    r.unread_reason = "no summary.json";
    return;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (!read_trial_summary(text.str(), r)) r.included = false;
}

// Whether the trials go on after one that exited `rc`.
bool stops_trials(int rc) {
  return rc == kExitBadInput || rc == kExitIncomplete || rc == kExitInterrupted;
}

// The trial's own options: its seed, its folder, and one trial.
RunOptions trial_options(const RunOptions& options, const fs::path& top, int64_t t) {
  RunOptions trial = options;
  trial.config.seed = options.config.seed + static_cast<uint64_t>(t - 1);
  trial.config.load.trials = 1;
  trial.output_dir = (top / ("trial-" + std::to_string(t))).string();
  return trial;
}

}  // namespace

int run_trials(const RunOptions& options, const TrialRunner& run_one) {
  const Config& c = options.config;
  if (options.controller_only) {
    throw ConfigError("load.trials: " + std::to_string(c.load.trials) +
                      " trials need `convoy run` (its own workers start again for each trial); "
                      "remote workers leave after one run");
  }
  const fs::path top = make_output_dir(c, options.output_dir);
  TrialsSummary s;
  s.planned = c.load.trials;
  s.first_seed = c.seed;
  s.benchmark_id = make_benchmark_id();
  s.start_time = iso_time_ms(std::chrono::system_clock::now());
  s.config_yaml = to_yaml(with_urls_redacted(c));
  int code = kExitOk;
  for (int64_t t = 1; t <= c.load.trials && !stop_requested(); ++t) {
    const RunOptions trial = trial_options(options, top, t);
    log_info("trial ", t, " of ", c.load.trials, " (seed ", trial.config.seed, ") in ",
             *trial.output_dir);
    TrialResult r;
    r.index = static_cast<int>(t);
    r.seed = trial.config.seed;
    r.folder = "trial-" + std::to_string(t);
    r.exit_code = run_one(trial);
    r.included = r.exit_code == kExitOk || r.exit_code == kExitCriterionFailed;
    if (r.included) read_trial(*trial.output_dir, r);
    s.trials.push_back(std::move(r));
    const int rc = s.trials.back().exit_code;
    if (rc == kExitCriterionFailed && code == kExitOk) code = rc;
    if (stops_trials(rc)) {
      code = rc;
      break;
    }
  }
  s.was_cancelled = stop_requested() || code == kExitInterrupted;
  if (s.was_cancelled) code = kExitInterrupted;
  s.end_time = iso_time_ms(std::chrono::system_clock::now());
  if (s.trials.empty()) return code;
  try {
    write_file_atomically(top / "summary.json", trials_summary_json(s));
  } catch (const std::exception& e) {
    log_error("the trials' combined summary was not written: ", e.what());
    return kExitIncomplete;
  }
  print_trials_table(std::cout, s);
  log_info("trials: combined summary in ", (top / "summary.json").string());
  return code;
}

}  // namespace convoy::controller
