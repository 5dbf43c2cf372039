// convoy-worker: one worker process; joins a controller from any host.
#include <sys/resource.h>

#include <csignal>
#include <cstring>
#include <iostream>
#include <string>

#include "common/log.hpp"
#include "worker/worker.hpp"

namespace {
void on_signal(int) { convoy::worker::Worker::request_stop_from_signal(); }

constexpr const char* kUsage =
    "usage: convoy-worker --connect tcp://HOST:PORT [--id NAME] [--wait-s SECONDS] [--verbose]\n"
    "                     [--curve-server-key controller.pub --curve-key worker-N.key]\n"
    "  Joins the convoy controller at --connect, runs the conversations it assigns, streams\n"
    "  records back. Exits when the run ends, or 5 s after the controller goes silent.\n"
    "  The API key is read from this process's environment (target.api_key_env).\n";
}  // namespace

int main(int argc, char** argv) {
  convoy::worker::WorkerOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "convoy-worker: " << arg << " needs a value\n" << kUsage;
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--connect") {
      options.connect = value();
    } else if (arg == "--id") {
      options.id = value();
    } else if (arg == "--wait-s") {
      options.first_contact_timeout_s = std::stod(value());
    } else if (arg == "--curve-server-key") {
      options.curve_server_key = value();
    } else if (arg == "--curve-key") {
      options.curve_key = value();
    } else if (arg == "--verbose") {
      convoy::set_log_level(convoy::LogLevel::kDebug);
    } else if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "convoy-worker: unknown argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (options.curve_server_key.empty() != options.curve_key.empty()) {
    std::cerr << "convoy-worker: --curve-server-key and --curve-key go together\n" << kUsage;
    return 2;
  }
  if (options.connect.empty()) {
    std::cerr << "convoy-worker: --connect is required\n" << kUsage;
    return 2;
  }
  convoy::set_log_prefix("convoy-worker");
  // Thousands of concurrent streams need thousands of descriptors: take the hard limit.
  if (rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    convoy::worker::Worker worker(options);
    return worker.run();
  } catch (const std::exception& e) {
    convoy::log_error(e.what());
    return 3;
  }
}
