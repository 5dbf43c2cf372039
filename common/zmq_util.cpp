#include "common/zmq_util.hpp"

#include "proto/messages.hpp"

namespace convoy {

void configure_socket(zmq::socket_t& socket, int linger_ms) {
  socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(proto::kMaxMessageBytes));
  socket.set(zmq::sockopt::sndhwm, kSendHighWaterMark);
  socket.set(zmq::sockopt::rcvhwm, kRecvHighWaterMark);
  socket.set(zmq::sockopt::linger, linger_ms);
}

std::string last_endpoint(zmq::socket_t& socket) { return socket.get(zmq::sockopt::last_endpoint); }

}  // namespace convoy
