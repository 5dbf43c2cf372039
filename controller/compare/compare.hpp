// `convoy compare RUN_DIR RUN_DIR... [-o OUT]`: the entry point the CLI calls.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace convoy::controller::compare {

// What `convoy compare --help` adds after the options.
extern const char* const kCompareHelpFooter;

// Reads the runs, prints the table on `out`, writes OUT/compare.json and OUT/compare.html
// (OUT: `out_dir`, default the current directory; created when missing). Returns the exit
// code: 0, 2 for bad input (a folder that is not a convoy run, named; too few columns), 3 when
// an output file cannot be written. Messages go to `err`.
int compare_main(const std::vector<std::string>& folders, const std::string& out_dir,
                 std::ostream& out, std::ostream& err);

}  // namespace convoy::controller::compare
