// Socket options every convoy ZeroMQ socket gets: bounded messages, bounded queues, no linger
// past shutdown beyond a short flush.
#pragma once

#include <string>
#include <zmq.hpp>

namespace convoy {

inline constexpr int kSendHighWaterMark = 10000;  // messages (batches) queued per peer
inline constexpr int kRecvHighWaterMark = 10000;

void configure_socket(zmq::socket_t& socket, int linger_ms = 2000);

// The endpoint a bound socket actually listens on (resolves tcp port 0).
std::string last_endpoint(zmq::socket_t& socket);

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
