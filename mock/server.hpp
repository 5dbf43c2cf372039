// convoy-mock's server: the HTTP frontend (Boost.Beast over one Asio io_context) in front of
// the simulated engine. Shared by main.cpp and the tests.
#pragma once

#include <cstdint>
#include <memory>

#include "mock/options.hpp"

namespace convoy::mock {

class Engine;

class Server {
 public:
  explicit Server(Options options);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens (throws std::runtime_error when it cannot), then runs the event loop on
  // options.threads background threads. Returns the bound port (the real one for --port 0).
  uint16_t start();
  // Stops accepting, drops in-flight work and joins the threads. Idempotent.
  void stop();

  uint16_t port() const;
  const Options& options() const;
  Engine& engine();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::mock
