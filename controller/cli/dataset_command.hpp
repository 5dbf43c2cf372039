// `convoy dataset convert IN OUT [--from FORMAT]`: ShareGPT and AIPerf's single_turn / multi_turn
// JSONL -> convoy JSONL (docs/datasets.md "Converting").
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace convoy::controller {

struct DatasetFlags {
  std::string in;    // the file to convert
  std::string out;   // the convoy JSONL to write
  std::string from;  // sharegpt | aiperf_single_turn | aiperf_multi_turn; empty: detected
  CLI::App* convert = nullptr;
};

// `convoy dataset` and its `convert` subcommand.
CLI::App* add_dataset_command(CLI::App& app, DatasetFlags& f);

// Runs the parsed subcommand; ConfigError (bad input) propagates to cli_main (exit 2).
int dataset_main(const DatasetFlags& f);

}  // namespace convoy::controller
