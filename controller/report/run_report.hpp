// The end of a run: writes every output (summary.json, summary.csv, report.html) and prints the
// console report (results table, errors, insights, verdict).
#pragma once

#include "controller/report/run_facts.hpp"
#include "controller/report/verdict.hpp"

namespace convoy::controller {

// Writes every output and prints the console report. Returns kExitIncomplete (3) when an output
// file could not be written (each is named on stderr and in summary.json "output_errors", and
// the verdict fails), else kExitCriterionFailed (1) when the verdict is fail, else 0.
int write_run_report(const ReportInputs& in);

// `config` as every output shows it: the password of each URL (target.url(s), telemetry
// endpoints) redacted (common/redact.hpp). The run itself uses the real one.
Config with_urls_redacted(Config config);

}  // namespace convoy::controller
