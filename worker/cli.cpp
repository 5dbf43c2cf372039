#include "worker/cli.hpp"

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <csignal>
#include <iostream>
#include <string>

#include "common/build_info.hpp"
#include "common/exit_codes.hpp"
#include "common/log.hpp"

namespace convoy::worker {

namespace {

void on_signal(int) { Worker::request_stop_from_signal(); }

constexpr const char* kDescription =
    "convoy-worker: joins the convoy controller at --connect, runs the conversations it assigns "
    "and streams records back. Exits when the run ends, or 5 s after the controller goes "
    "silent. The API key is read from this process's environment (target.api_key_env).";

// A ZeroMQ endpoint the controller can be reached at.
std::string check_endpoint(const std::string& e) {
  const bool tcp = e.rfind("tcp://", 0) == 0 && e.size() > 6;
  const bool ipc = e.rfind("ipc://", 0) == 0 && e.size() > 6;
  return tcp || ipc ? std::string() : "expected tcp://HOST:PORT or ipc://PATH, got '" + e + "'";
}

// CLI11's PositiveNumber prints its whole double range for a non-number: say it plainly.
std::string check_seconds(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool ok = ec == std::errc() && end == s.data() + s.size() && std::isfinite(v) && v > 0;
  return ok ? std::string() : "expected a number of seconds greater than 0, got '" + s + "'";
}

std::string check_not_empty(const std::string& s) {
  return s.empty() ? std::string("must not be empty") : std::string();
}

}  // namespace

std::optional<int> parse_worker_cli(int argc, const char* const* argv, WorkerCli& out,
                                    std::ostream& out_stream, std::ostream& err_stream) {
  CLI::App app{kDescription, "convoy-worker"};
  app.set_version_flag("--version", build_info::version_line("convoy-worker"));
  WorkerOptions& o = out.options;
  app.add_option("--connect", o.connect, "Controller control endpoint, e.g. tcp://10.0.0.1:5555")
      ->required()
      ->check(CLI::Validator(check_endpoint, "ENDPOINT"));
  app.add_option("--id", o.id, "Worker id (default: HOST-PID)")
      ->check(CLI::Validator(check_not_empty, "NAME"));
  app.add_option("--wait-s", o.first_contact_timeout_s,
                 "Seconds to wait for the controller's welcome (default 60)")
      ->check(CLI::Validator(check_seconds, "SECONDS"));
  auto* server_key = app.add_option("--curve-server-key", o.curve_server_key,
                                    "controller.pub from `convoy keygen` (enables CURVE)")
                         ->check(CLI::ExistingFile);
  auto* key = app.add_option("--curve-key", o.curve_key, "This worker's worker-N.key")
                  ->check(CLI::ExistingFile);
  server_key->needs(key);
  key->needs(server_key);
  app.add_flag("-v,--verbose", out.verbose, "Debug logging");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e, out_stream, err_stream);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  return std::nullopt;
}

int worker_main(int argc, char** argv) {
  WorkerCli cli;
  if (auto rc = parse_worker_cli(argc, argv, cli, std::cout, std::cerr)) return *rc;
  if (cli.verbose) set_log_level(LogLevel::kDebug);
  set_log_prefix("convoy-worker");
  // Thousands of concurrent streams need thousands of descriptors: take the hard limit.
  if (rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    Worker worker(cli.options);
    return worker.run();
  } catch (const std::exception& e) {
    log_error(e.what());
    return kExitIncomplete;
  }
}

}  // namespace convoy::worker
