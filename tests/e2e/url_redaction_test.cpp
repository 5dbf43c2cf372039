// Credentials in URLs end to end: a run against convoy-mock whose target.urls
// and telemetry endpoints carry `user:password@` writes the password into no file of its output
// folder, no console line, nothing `convoy validate` prints and no file `convoy compare` writes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/mock_log.hpp"
#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

constexpr const char* kPassword = "Pw-s3cr3t-77";

// Every regular file under `dir` that holds the password, by path.
std::vector<std::string> files_leaking(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    if (read_file(e.path()).find(kPassword) != std::string::npos) out.push_back(e.path());
  }
  return out;
}

}  // namespace

TEST_CASE("a URL's password reaches no output file, console line or comparison") {
  const fs::path dir = fresh_dir("e2e-url-redaction");
  Subprocess mock({bin("mock/convoy-mock"), "--port", "0", "--speedup", "50"});
  const std::string url = mock_url(mock);  // http://127.0.0.1:PORT
  const std::string with_password = "http://user:" + std::string(kPassword) + "@" + url.substr(7);
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << "name: e2e-redaction\n"
                        "seed: 3\n"
                        "target:\n  urls: [\""
                     << with_password << "\", \"" << url
                     << "\"]\n"
                        "dataset:\n  type: synthetic\n  conversations: 8\n"
                        "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
                        "  input_tokens: {mean: 16, stddev: 0}\n"
                        "  output_tokens: {mean: 4, stddev: 0}\n"
                        "load:\n  mode: concurrency\n  concurrency: 4\n  sessions: 8\n"
                        "telemetry:\n  interval_s: 0.2\n  timeout_s: 1\n  endpoints:\n"
                        "    - {name: frontend, url: \""
                     << with_password
                     << "/metrics\"}\n"
                        "    - {name: down, url: \"http://u:"
                     << kPassword
                     << "@127.0.0.1:1/metrics\", required: false}\n"
                        "workers:\n  local: 1\n"
                        "output:\n  html: true\n  records: true\n  slice_s: 0.5\n"
                        "  aiperf_export: true\n";
  const fs::path out = dir / "out";
  Subprocess run({bin("controller/convoy"), "run", cfg.string(), "-o", out.string()});
  const auto rc = run.wait(90);
  INFO(run.output());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  CHECK(run.output().find(kPassword) == std::string::npos);
  CHECK(run.output().find("user:<redacted>@127.0.0.1") != std::string::npos);
  const std::string summary = read_file(out / "summary.json");
  CHECK(summary.find("user:<redacted>@127.0.0.1") != std::string::npos);
  CHECK(read_file(out / "server_metrics.jsonl").find("user:<redacted>@") != std::string::npos);
  CHECK(files_leaking(out).empty());
  for (const auto& f : files_leaking(out)) CHECK_MESSAGE(false, f);

  SUBCASE("convoy validate prints the resolved config redacted") {
    Subprocess validate({bin("controller/convoy"), "validate", cfg.string()});
    const auto vrc = validate.wait(30);
    INFO(validate.output());
    REQUIRE(vrc.has_value());
    CHECK(*vrc == 0);
    CHECK(validate.output().find(kPassword) == std::string::npos);
    CHECK(validate.output().find("user:<redacted>@") != std::string::npos);
  }
  SUBCASE("convoy compare writes no password") {
    const fs::path cmp = dir / "cmp";
    Subprocess compare(
        {bin("controller/convoy"), "compare", out.string(), out.string(), "-o", cmp.string()});
    const auto crc = compare.wait(30);
    INFO(compare.output());
    REQUIRE(crc.has_value());
    CHECK(*crc == 0);
    CHECK(compare.output().find(kPassword) == std::string::npos);
    CHECK(files_leaking(cmp).empty());
  }
  mock.signal(SIGTERM);
  CHECK(mock.wait(30).has_value());
}
