// End to end, real binaries: a `convoy controller` with workers.curve_keys admits a remote worker
// holding an authorized key (from `convoy keygen`) and refuses, with a log line naming its
// address, one holding a key from another keygen run.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "e2e/subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace convoy::test;

namespace {

void keygen(const fs::path& dir) {
  Subprocess k({bin("controller/convoy"), "keygen", dir.string(), "--workers", "2"});
  auto rc = k.wait(30);
  INFO(k.output());
  REQUIRE(rc == 0);
  REQUIRE(fs::exists(dir / "controller.pub"));
  REQUIRE(fs::exists(dir / "worker-0.key"));
}

// Controller only, CURVE on, one remote worker expected, the bundled mock as the target.
fs::path write_config(const fs::path& dir, const fs::path& keys, double ready_timeout_s) {
  const fs::path cfg = dir / "config.yaml";
  std::ofstream(cfg) << "name: e2e-curve\n"
                     << "target:\n  url: mock\n"
                     << "mock:\n  workers: 2\n  speedup: 50\n  itl_ms: 1\n"
                     << "dataset:\n  type: synthetic\n  conversations: 6\n"
                     << "  turns: {mean: 2, stddev: 0, min: 2, max: 2}\n"
                     << "  input_tokens: {mean: 32, stddev: 0}\n"
                     << "  output_tokens: {mean: 8, stddev: 0}\n"
                     << "load:\n  mode: concurrency\n  concurrency: 3\n"
                     << "workers:\n  local: 0\n  expect: 1\n  listen: tcp://127.0.0.1:0\n"
                     << "  curve_keys: " << keys.string() << "\n"
                     << "  ready_timeout_s: " << ready_timeout_s << "\n"
                     << "output:\n  html: false\n";
  return cfg;
}

// The control endpoint the controller logged ("controller listening on tcp://127.0.0.1:PORT"):
// it bound port 0 itself, so no other process can take the port between choice and bind.
std::string control_endpoint(Subprocess& controller) {
  const std::string prefix = "controller listening on ";
  REQUIRE_MESSAGE(controller.wait_for_output(prefix, 30), controller.output());
  REQUIRE_MESSAGE(controller.wait_for_output(" (results", 5), controller.output());
  const std::string& out = controller.output();
  const size_t at = out.find(prefix) + prefix.size();
  return out.substr(at, out.find(' ', at) - at);
}

Subprocess start_worker(const std::string& endpoint, const std::string& id, const fs::path& server,
                        const fs::path& key) {
  return Subprocess({bin("worker/convoy-worker"), "--connect", endpoint, "--id", id, "--wait-s",
                     "10", "--curve-server-key", server.string(), "--curve-key", key.string()});
}

}  // namespace

TEST_CASE("CurveZMQ: an authorized worker joins a remote run, a stranger is refused") {
  const fs::path dir = fresh_dir("e2e-curve-run");
  const fs::path keys = dir / "keys";
  const fs::path other = dir / "other-keys";
  keygen(keys);
  keygen(other);
  const fs::path out = dir / "out";

  SUBCASE("a worker holding worker-0.key joins and the run completes") {
    const fs::path cfg = write_config(dir, keys, 30);
    Subprocess controller(
        {bin("controller/convoy"), "controller", cfg.string(), "-o", out.string()});
    const std::string endpoint = control_endpoint(controller);
    CHECK(endpoint.rfind("tcp://127.0.0.1:", 0) == 0);
    Subprocess worker =
        start_worker(endpoint, "curve-good", keys / "controller.pub", keys / "worker-0.key");

    auto rc = controller.wait(90);
    INFO(controller.output());
    INFO(worker.output());
    REQUIRE(rc.has_value());
    CHECK(*rc == 0);
    CHECK(controller.output().find("worker curve-good") != std::string::npos);
    CHECK(controller.output().find("refused a worker connection") == std::string::npos);
    auto worker_rc = worker.wait(30);
    REQUIRE(worker_rc.has_value());
    CHECK(*worker_rc == 0);

    // Every request went through the authenticated worker.
    const auto records = read_jsonl(out / "records.jsonl");
    std::set<std::string> worker_ids;
    for (const auto& d : records) worker_ids.insert(d["worker_id"].GetString());
    CHECK(records.size() == 12);  // 6 conversations of 2 turns
    CHECK(worker_ids == std::set<std::string>{"curve-good"});
    auto summary = read_json(out / "summary.json");
    REQUIRE_FALSE(summary.HasParseError());
    REQUIRE(summary["workers"].Size() == 1);
    CHECK(std::string(summary["workers"][0]["worker_id"].GetString()) == "curve-good");
  }

  SUBCASE("a worker holding a key from another keygen is refused and never joins") {
    const fs::path cfg = write_config(dir, keys, 3);
    Subprocess controller(
        {bin("controller/convoy"), "controller", cfg.string(), "-o", out.string()});
    const std::string endpoint = control_endpoint(controller);
    // It knows the controller's public key (that is public) but its own key is not authorized.
    Subprocess stranger =
        start_worker(endpoint, "curve-stranger", keys / "controller.pub", other / "worker-0.key");

    auto rc = controller.wait(60);
    INFO(controller.output());
    INFO(stranger.output());
    REQUIRE(rc.has_value());
    CHECK(*rc == 3);  // only 0 of 1 worker ready after workers.ready_timeout_s
    CHECK(controller.output().find("refused a worker connection from 127.0.0.1") !=
          std::string::npos);
    const std::string stranger_key = read_file(other / "worker-0.key").substr(9, 40);
    CHECK(controller.output().find(stranger_key) != std::string::npos);
    CHECK(controller.output().find("worker curve-stranger") == std::string::npos);
    CHECK(controller.output().find("0 of 1 worker(s) ready") != std::string::npos);
    std::error_code ec;  // nothing was sent: no records file, or an empty one
    const auto records_bytes = fs::file_size(out / "records.jsonl", ec);
    CHECK((ec || records_bytes == 0));
  }
  fs::remove_all(dir);
}
