// The controller's two sockets: control (ROUTER: Hello, Pong, Heartbeat in; Welcome, Ping,
// Assign, Stop out) and results (PULL: Results and Bye from every worker). Bound as workers.*
// says, with CURVE when workers.curve_keys is set; on a zmq context the Run is given, so tests
// reach them over inproc://.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "common/curve.hpp"
#include "common/zmq_util.hpp"
#include "controller/config/config.hpp"
#include "proto/envelope.hpp"

namespace convoy::controller {

class RunSockets {
 public:
  // Binds both; throws ConfigError naming the key when an endpoint cannot be bound.
  // `own_workers_only`: `convoy run` with workers.listen left at its default and no remote
  // workers expected, so the control socket goes to a private ipc:// folder instead.
  RunSockets(zmq::context_t& ctx, const Config& config, bool own_workers_only);

  const std::string& control_endpoint() const { return control_endpoint_; }
  const std::string& results_endpoint() const { return results_endpoint_; }

  template <class T>
  void send(const std::string& worker_id, const T& msg) {
    std::string bytes = proto::encode(msg);
    // ROUTER drops messages to unknown or full peers instead of blocking: liveness covers it.
    (void)router_.send(zmq::buffer(worker_id),
                       zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    (void)router_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }

  using ResultHandler = std::function<void(zmq::message_t& payload)>;
  using ControlHandler = std::function<void(const std::string& worker_id, zmq::message_t&)>;
  // Waits up to timeout_ns for either socket, then drains both (bounded): results first, so a
  // conversation's end frees its slot before new ones are scheduled.
  void poll(int64_t timeout_ns, const ResultHandler& on_result, const ControlHandler& on_control);

 private:
  std::optional<PrivateDir> ipc_dir_;    // the ipc:// endpoints' folder; outlives the sockets
  std::optional<ZapAuthenticator> zap_;  // before the sockets: destroyed after them
  zmq::socket_t router_;
  zmq::socket_t pull_;
  std::string control_endpoint_;
  std::string results_endpoint_;
};

}  // namespace convoy::controller
