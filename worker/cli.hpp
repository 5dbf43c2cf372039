// convoy-worker's command line: parsed with CLI11 like `convoy`'s, with its exit codes
// (common/exit_codes.hpp). Bad flags print a clear message and exit kExitBadInput (2).
#pragma once

#include <iosfwd>
#include <optional>

#include "worker/worker.hpp"

namespace convoy::worker {

struct WorkerCli {
  WorkerOptions options;
  bool verbose = false;
};

// Parses argv into `out`. nullopt: run the worker. Otherwise the process exit code: 0 after
// --help or --version (printed to `out_stream`), kExitBadInput after a bad command line (the
// reason and a hint printed to `err_stream`).
std::optional<int> parse_worker_cli(int argc, const char* const* argv, WorkerCli& out,
                                    std::ostream& out_stream, std::ostream& err_stream);

// The whole of convoy-worker's main(): parse, set up signals and limits, run.
int worker_main(int argc, char** argv);

}  // namespace convoy::worker
