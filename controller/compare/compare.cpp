#include "controller/compare/compare.hpp"

#include <filesystem>

#include "common/exit_codes.hpp"
#include "controller/compare/compare_output.hpp"
#include "controller/compare/run_loader.hpp"
#include "controller/report/output_file.hpp"

namespace convoy::controller::compare {

namespace fs = std::filesystem;

const char* const kCompareHelpFooter = R"(
Reads each RUN_DIR's summary.json (and records.jsonl, when there, for TTFT by turn and the
percentiles' noise intervals). The first run is the baseline: every other column shows its
relative difference (+x.x% / -x.x%) and whether that is better or worse for the metric
(latencies: lower; throughputs: higher), only when it is larger than the noise (else "within
noise"): for two load.trials folders, apart 95% intervals over their trials and at least 1%;
for percentiles of runs that kept records.jsonl, apart 95% intervals on the rank and at least
1%; otherwise a difference of at least 5%.
Given ONE run with stages (load.stages, load.sweep or load.search), its stages are compared.

Writes OUT/compare.json and OUT/compare.html (self-contained: overlaid latency distributions,
the throughput-latency curve, TTFT by turn, config differences). OUT defaults to the current
directory; existing compare.json / compare.html there are replaced, with a warning.

Exit codes: 0 written; 2 a folder is not a convoy run (named), or fewer than two runs and no
stages; 3 an output file could not be written.

Examples:
  convoy compare artifacts/base-20260101-100000 artifacts/tuned-20260101-110000 -o cmp
  convoy compare artifacts/sweep-20260101-120000      # a sweep: its steps side by side
)";

namespace {

// Creates OUT; warns about the compare files it is about to replace.
bool prepare_out_dir(const fs::path& dir, std::ostream& err) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    err << "convoy compare: error: -o " << dir.string() << ": not a folder\n";
    return false;
  }
  fs::create_directories(dir, ec);
  if (ec) {
    err << "convoy compare: error: -o " << dir.string() << ": cannot create: " << ec.message()
        << "\n";
    return false;
  }
  for (const char* name : {"compare.json", "compare.html"}) {
    if (fs::exists(dir / name, ec)) {
      err << "convoy compare: warning: replacing " << (dir / name).string() << "\n";
    }
  }
  return true;
}

}  // namespace

int compare_main(const std::vector<std::string>& folders, const std::string& out_dir,
                 std::ostream& out, std::ostream& err) {
  Comparison cmp;
  try {
    cmp = load_comparison(folders);
  } catch (const CompareError& e) {
    err << "convoy compare: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  const fs::path dir = out_dir.empty() ? fs::path(".") : fs::path(out_dir);
  if (!prepare_out_dir(dir, err)) return kExitBadInput;
  out << console_table(cmp);
  int rc = kExitOk;
  const std::pair<const char*, std::string> files[] = {{"compare.json", compare_json(cmp)},
                                                       {"compare.html", compare_html(cmp)}};
  for (const auto& [name, content] : files) {
    if (auto e = write_file_atomically_or_error(dir / name, content)) {
      err << "convoy compare: error: " << describe(*e) << "\n";
      rc = kExitIncomplete;
    }
  }
  if (rc == kExitOk) {
    out << "\nOutputs: " << (dir / "compare.json").string() << ", "
        << (dir / "compare.html").string() << "\n";
  }
  return rc;
}

}  // namespace convoy::controller::compare
