// Socket options every convoy ZeroMQ socket gets: bounded messages, bounded queues, no linger
// past shutdown beyond a short flush.
#pragma once

#include <string>
#include <string_view>
#include <zmq.hpp>

namespace convoy {

inline constexpr int kSendHighWaterMark = 10000;  // messages (batches) queued per peer
inline constexpr int kRecvHighWaterMark = 10000;

void configure_socket(zmq::socket_t& socket, int linger_ms = 2000);

// The endpoint a bound socket actually listens on (resolves tcp port 0).
std::string last_endpoint(zmq::socket_t& socket);

// ZeroMQ sockets speak IPv4 only unless told otherwise: turn IPv6 on for a tcp://[ADDR]:PORT
// endpoint (only for those: a dual-stack socket may resolve a name to an address the peer does
// not listen on).
void enable_ipv6_for(zmq::socket_t& socket, std::string_view endpoint);

// Binds `socket` to `endpoint`; a failure throws std::runtime_error naming the endpoint and
// `what` (e.g. "workers.listen") beside ZeroMQ's reason.
void bind_or_throw(zmq::socket_t& socket, const std::string& endpoint, const std::string& what);

// A folder only this user can enter (mode 0700), for ipc:// endpoints other users must not
// reach: under $XDG_RUNTIME_DIR when set, else the temp folder. Removed with its contents on
// destruction.
class PrivateDir {
 public:
  explicit PrivateDir(const std::string& prefix);
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Drains `socket` while ZMQ_EVENTS reports POLLIN, calling on_message for each message (the
// edge-triggered ZMQ_FD contract: after a wake-up, read until it says no more).
template <class OnMessage>
size_t drain_socket(zmq::socket_t& socket, OnMessage&& on_message, size_t max_messages = 100000) {
  size_t n = 0;
  while (n < max_messages && (socket.get(zmq::sockopt::events) & ZMQ_POLLIN)) {
    zmq::message_t msg;
    if (!socket.recv(msg, zmq::recv_flags::dontwait)) break;
    ++n;
    on_message(msg);
  }
  return n;
}

}  // namespace convoy
