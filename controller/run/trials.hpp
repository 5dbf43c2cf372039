// load.trials: the whole profile run N times in one command. Trial t (1-based) is an ordinary run
// with seed + t - 1 (so trial 1 is the run without trials, and any trial is reproducible alone
// with `--set seed=S --set load.trials=1`), fresh conversations (their ids and text derive from
// the seed), its own folder OUT/trial-t with every normal output, and its own mock when
// target.url is mock (a fresh server per trial). Then OUT/summary.json combines them: per
// headline figure the trial values, the mean and a 95% Student t interval
// (controller/report/trials_summary.hpp), and the console prints the same as a table.
//
// Exit codes follow the runs': a trial that fails a criterion (1) lets the others run and the
// command exits 1; one that cannot complete (3) or had bad input (2) stops the trials; Ctrl-C
// stops them (130). Every path that finished a trial writes the combined summary of the trials
// that finished (an interrupted trial keeps its folder but is in no interval).
#pragma once

#include <functional>

#include "controller/run/run.hpp"

namespace convoy::controller {

// Runs one trial (its options: seed, output folder, trials 1) and returns its exit code.
using TrialRunner = std::function<int(const RunOptions&)>;

// The trials of options.config.load.trials, each through `run_one`. Throws ConfigError for bad
// input found before any trial (`convoy controller`: remote workers leave after one run).
int run_trials(const RunOptions& options, const TrialRunner& run_one);

}  // namespace convoy::controller
