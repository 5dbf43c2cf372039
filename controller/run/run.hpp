// One benchmark run, end to end: workers (local and remote) register, conversations are sharded
// by correlation id and scheduled, records stream back into metrics and records.jsonl, and the
// outputs are written on every path that sent traffic (success, failure, Ctrl-C).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "common/exit_codes.hpp"
#include "controller/config/config.hpp"
#include "controller/run/registry.hpp"

namespace convoy::controller {

// Exit codes (docs/architecture.md "Exit codes"), shared with convoy-worker.
using convoy::kExitBadInput;
using convoy::kExitCriterionFailed;
using convoy::kExitIncomplete;
using convoy::kExitInterrupted;
using convoy::kExitOk;

struct RunOptions {
  Config config;
  std::optional<std::string> output_dir;  // -o: overrides output.dir
  bool controller_only = false;           // `convoy controller`: start no local workers
  bool quiet = false;                     // no live view, no info lines
};

// What a test may replace; users get the defaults.
struct RunSeams {
  zmq::context_t* context = nullptr;  // the sockets' context (nullptr: the run's own); a
                                      // caller's context lets its sockets use inproc://
  std::function<int64_t()> clock;     // steady nanoseconds (empty: std::chrono::steady_clock)
  Liveness liveness;                  // heartbeat period, misses before lost, clock re-check
  // The check before traffic (preflight.hpp: GET /v1/models). Off only for tests whose target
  // is a bare listening socket that never answers HTTP.
  bool check_target = true;
};

// Runs and returns the process exit code. Throws only for bad input found before any traffic.
// With load.trials > 1, runs every trial (trials.hpp) and writes their combined summary. -q: no
// live view and no info lines; warnings and errors still print (-v outranks it).
int run_benchmark(const RunOptions& options, const RunSeams& seams = {});
// One run, whatever load.trials says (a trial of run_benchmark's).
int run_single(const RunOptions& options, const RunSeams& seams = {});

// SIGINT/SIGTERM: the first asks for a graceful stop, the second cancels in-flight work.
// Async-signal-safe.
void request_stop_from_signal();
// True once a signal asked the run to stop (for waits outside the run loop).
bool stop_requested();

}  // namespace convoy::controller
