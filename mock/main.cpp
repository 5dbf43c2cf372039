// convoy-mock: a Dynamo-like OpenAI-compatible mock server (see docs/mock.md).
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>

#include "mock/options.hpp"
#include "mock/server.hpp"

int main(int argc, char** argv) {
  auto parsed = convoy::mock::parse_options(argc, argv);
  if (!parsed.options) {
    (parsed.exit_code == 0 ? std::cout : std::cerr) << parsed.message << '\n';
    return parsed.exit_code;
  }
  // Block the stop signals before any thread starts, then wait for them on this thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  try {
    convoy::mock::Server server(*parsed.options);
    const auto port = server.start();
    std::printf("convoy-mock listening on http://%s:%u\n", parsed.options->host.c_str(),
                static_cast<unsigned>(port));
    std::fflush(stdout);
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return 0;
}
