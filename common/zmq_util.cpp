#include "common/zmq_util.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "proto/messages.hpp"

namespace convoy {

void configure_socket(zmq::socket_t& socket, int linger_ms) {
  socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(proto::kMaxMessageBytes));
  socket.set(zmq::sockopt::sndhwm, kSendHighWaterMark);
  socket.set(zmq::sockopt::rcvhwm, kRecvHighWaterMark);
  socket.set(zmq::sockopt::linger, linger_ms);
}

std::string last_endpoint(zmq::socket_t& socket) { return socket.get(zmq::sockopt::last_endpoint); }

void enable_ipv6_for(zmq::socket_t& socket, std::string_view endpoint) {
  if (endpoint.rfind("tcp://[", 0) == 0) socket.set(zmq::sockopt::ipv6, 1);
}

void bind_or_throw(zmq::socket_t& socket, const std::string& endpoint, const std::string& what) {
  enable_ipv6_for(socket, endpoint);
  try {
    socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    std::string hint;
    if (e.num() == ENODEV) {
      hint = " (bind takes an IP address, * or an interface name, not a host name)";
    } else if (e.num() == EADDRINUSE) {
      hint = " (another process listens there: pick another port, or port 0 for a free one)";
    }
    throw std::runtime_error(what + " " + endpoint + ": cannot bind: " + e.what() + hint);
  }
}

PrivateDir::PrivateDir(const std::string& prefix) {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  std::error_code ec;
  std::filesystem::path base = runtime && *runtime && std::filesystem::is_directory(runtime, ec)
                                   ? std::filesystem::path(runtime)
                                   : std::filesystem::temp_directory_path();
  std::string templ = (base / (prefix + "XXXXXX")).string();
  // mkdtemp creates the folder with mode 0700.
  if (::mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error("cannot create a private folder in " + base.string() + ": " +
                             std::strerror(errno));
  }
  path_ = templ;
}

PrivateDir::~PrivateDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace convoy
