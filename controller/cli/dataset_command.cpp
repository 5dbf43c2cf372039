#include "controller/cli/dataset_command.hpp"

#include <iostream>

#include "common/exit_codes.hpp"
#include "controller/dataset/convert.hpp"

namespace convoy::controller {

CLI::App* add_dataset_command(CLI::App& app, DatasetFlags& f) {
  auto* dataset = app.add_subcommand("dataset", "Work with dataset files (convert)");
  dataset->require_subcommand(1);
  f.convert = dataset->add_subcommand(
      "convert", "ShareGPT / AIPerf single_turn, multi_turn -> convoy JSONL (dataset.type jsonl)");
  f.convert->add_option("in", f.in, "The file to convert")->required();
  f.convert->add_option("out", f.out, "The convoy JSONL file to write")->required();
  f.convert->add_option("--from", f.from, "The input's format (detected when absent)")
      ->check(CLI::IsMember({"sharegpt", "aiperf_single_turn", "aiperf_multi_turn"}));
  f.convert->footer(R"(
Prints the format (and how it was detected) and every mapping applied with its count, e.g.
  from=gpt -> max_tokens = the reply's length in tokens; ...: 1234 turns
Exit codes: 0 written, 2 bad input (file:line:key; nothing written), 3 OUT not written.
Docs: docs/datasets.md.)");
  return dataset;
}

int dataset_main(const DatasetFlags& f) {
  std::optional<std::string> from;
  if (!f.from.empty()) from = f.from;
  convert_dataset(f.in, f.out, from, std::cout);
  return convoy::kExitOk;
}

}  // namespace convoy::controller
