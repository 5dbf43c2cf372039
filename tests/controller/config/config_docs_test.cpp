// docs/config.md lists every key the loader accepts: a key added to the key table
// (controller/config/config_keys.hpp) without a row in the reference fails here. And the one
// rule config.md and datasets.md both state for a relative dataset.path holds.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/config/config_keys.hpp"
#include "controller/config_test_util.hpp"
#include "test_util.hpp"

namespace {

// One heading of docs/config.md's "## Keys" part and the lines under it, up to the next heading.
struct DocSection {
  std::string heading;
  std::vector<std::string> lines;
};

// The reference tables only: "## Ranges" also names keys, but a range is no description.
std::vector<DocSection> config_doc_key_sections() {
  const auto path = std::filesystem::path(CONVOY_SOURCE_DIR) / "docs/config.md";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read ", path.string());
  std::vector<DocSection> sections;
  bool in_keys = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) {
      in_keys = line == "## Keys";
    } else if (!in_keys) {
      continue;
    } else if (line.rfind('#', 0) == 0) {
      sections.push_back({line, {}});
    } else if (!sections.empty()) {
      sections.back().lines.push_back(line);
    }
  }
  return sections;
}

// A table row whose first cell names `leaf` in backticks ("| `arrival`, `burstiness` | ..."), or
// keys under it ("| `cancel.fraction` |" documents `cancel`).
bool row_names(const std::string& line, const std::string& leaf) {
  if (line.rfind("| ", 0) != 0) return false;
  const std::string cell = line.substr(0, line.find(" | ", 1));
  return cell.find("`" + leaf + "`") != std::string::npos ||
         cell.find("`" + leaf + ".") != std::string::npos;
}

bool section_has_row(const DocSection& s, const std::string& leaf) {
  for (const auto& line : s.lines) {
    if (row_names(line, leaf)) return true;
  }
  return false;
}

// `path` is documented by a heading naming it (`target`), a row of the "Top level" table
// (`seed`), or a row `leaf` under a heading naming its section (`load.sweep` -> `settle_s`;
// `load` -> `cancel.fraction`; `slo` and `fail_on` -> `fail_on.error_rate`).
bool documented(const std::vector<DocSection>& sections, const std::string& path) {
  for (const auto& s : sections) {
    if (s.heading.find("`" + path + "`") != std::string::npos) return true;
    if (s.heading.find("Top level") != std::string::npos && section_has_row(s, path)) return true;
  }
  for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
    const std::string prefix = path.substr(0, dot);
    for (const auto& s : sections) {
      if (s.heading.find("`" + prefix + "`") == std::string::npos) continue;
      if (section_has_row(s, path.substr(dot + 1)) || section_has_row(s, path)) return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("docs/config.md documents every key the loader accepts") {
  const auto sections = config_doc_key_sections();
  REQUIRE(sections.size() > 5);
  const auto paths = convoy::config_keys::known_paths();
  REQUIRE(paths.size() > 50);
  for (const auto& path : paths) {
    CHECK_MESSAGE(documented(sections, path), "docs/config.md has no row for ", path);
  }
  SUBCASE("the check itself finds a key that is missing") {
    CHECK_FALSE(documented(sections, "output.no_such_key"));
    CHECK_FALSE(documented(sections, "load.sweep.no_such_key"));
  }
}

TEST_CASE("dataset.path: relative to the config file's folder, from --set to the working one") {
  convoy::test::TempDir dir("convoy-docs-path-");
  std::filesystem::create_directories(dir.path() / "sub");
  std::ofstream(dir.path() / "sub" / "rows.jsonl") << "{\"text\": \"hello\"}\n";
  const auto config_file = dir.path() / "sub" / "c.yaml";
  std::ofstream(config_file) << "dataset: {type: jsonl, path: rows.jsonl}\n";
  // The working directory (the test's build folder) has no rows.jsonl: the file's folder decides.
  REQUIRE_FALSE(std::filesystem::exists("rows.jsonl"));
  const convoy::Config c = convoy::load_config(config_file.string());
  CHECK(c.dataset.path == (dir.path() / "sub" / "rows.jsonl").string());

  try {
    convoy::load_config(config_file.string(), {"dataset.path=rows.jsonl"});
    FAIL("a --set path is looked up in the working directory, where there is none");
  } catch (const convoy::ConfigError& e) {
    CHECK(convoy::test::contains(e.what(), "--set dataset.path=rows.jsonl"));
    CHECK(convoy::test::contains(e.what(), "file 'rows.jsonl' does not exist"));
  }
}
