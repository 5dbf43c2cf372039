// Reads run folders for `convoy compare`: each folder's summary.json (checked to be convoy's),
// the resolved config it holds (`run.config_yaml`), its `stages[]`, and records.jsonl when
// present (per-turn TTFT). Everything here throws CompareError on bad input.
#pragma once

#include <istream>
#include <map>
#include <string>
#include <vector>

#include "controller/compare/comparison.hpp"

namespace convoy::controller::compare {

// The columns to compare and how they were chosen.
struct Comparison {
  bool stages_mode = false;  // one run given: its stages are the columns
  std::vector<Column> columns;
};

// A whole-run column (its stages in Column::stages) from summary.json text. `folder` names the
// run in messages and is the column's name. Throws CompareError when the text is not JSON or
// not a convoy summary.json. Per-turn TTFT comes from the summary's first/later-turn split.
Column column_from_summary(const std::string& folder, const std::string& summary_text);

// Per-turn TTFT from records.jsonl (measured, successful, not settle, not close requests):
// replaces the summary's first/later split of `run` and of each of its stages by one group per
// turn index; and the samples behind the percentiles (Column::samples: latencies of the
// successful ones, schedule lag of every one sent), for the noise intervals. Lines that do not
// parse are skipped; returns the number of successful records used.
int64_t add_turns_from_records(std::istream& records, Column& run);

// key.path -> value text of a YAML document: maps flattened with dots, scalars as written,
// sequences in YAML flow style (`[1, 2, 4]`), null as "null". Throws CompareError.
std::map<std::string, std::string> flatten_yaml(const std::string& yaml_text);

// The folders given on the command line, read. Two or more folders: one column per run. One
// folder: its stages (at least two). Fewer: CompareError with the usage.
Comparison load_comparison(const std::vector<std::string>& folders);

}  // namespace convoy::controller::compare
