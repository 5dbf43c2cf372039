#include "controller/run/run_sockets.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "common/log.hpp"
#include "controller/live/listen_exposure.hpp"

namespace convoy::controller {

RunSockets::RunSockets(zmq::context_t& ctx, const Config& config, bool own_workers_only)
    : router_(ctx, zmq::socket_type::router), pull_(ctx, zmq::socket_type::pull) {
  configure_socket(router_);
  configure_socket(pull_);
  const std::string& listen = config.workers.listen;
  if (config.workers.curve_keys) {
    // Only workers holding an authorized key get in; the ZAP handler logs the others.
    const std::filesystem::path dir = *config.workers.curve_keys;
    CurveKeyPair server = read_curve_key_file((dir / "controller.key").string());
    zap_.emplace(ctx, read_authorized_keys((dir / "authorized_workers").string()));
    make_curve_server(router_, server);
    make_curve_server(pull_, server);
  } else if (listen.rfind("tcp://", 0) == 0) {
    const std::string host = listen.substr(6, listen.rfind(':') - 6);
    live::warn_unless_loopback("workers.listen", listen, host,
                               " and workers.curve_keys is not set: any host that reaches it can "
                               "join the run (see `convoy keygen`)");
  }
  router_.set(zmq::sockopt::router_mandatory, 0);
  std::string control_at = listen;
  if (own_workers_only) {
    // `convoy run` left at the default: its own workers only, over ipc:// in a folder only
    // this user can enter, instead of a loopback port any local user could connect to.
    ipc_dir_.emplace("convoy-");
    control_at = "ipc://" + ipc_dir_->path() + "/control";
  }
  bind_or_throw(router_, control_at, "workers.listen");
  control_endpoint_ = last_endpoint(router_);
  // Results listen where configured, else on the same interface on a port of their own.
  const std::string& base = control_endpoint_;
  if (config.workers.results_listen) {
    bind_or_throw(pull_, *config.workers.results_listen, "workers.results_listen");
  } else if (base.rfind("tcp://", 0) == 0) {
    size_t colon = base.rfind(':');
    bind_or_throw(pull_, base.substr(0, colon) + ":0", "the results socket");
  } else {
    bind_or_throw(pull_, base + ".results", "the results socket");
  }
  results_endpoint_ = last_endpoint(pull_);
  // A private folder's endpoints are said once, with the workers ready (WorkerPlane).
  const LogLevel level = ipc_dir_ ? LogLevel::kDebug : LogLevel::kInfo;
  if (log_level() <= level) {
    log_line(level, detail::concat("controller listening on ", control_endpoint_, " (results ",
                                   results_endpoint_, ")"));
  }
}

void RunSockets::poll(int64_t timeout_ns, const ResultHandler& on_result,
                      const ControlHandler& on_control) {
  zmq::pollitem_t items[] = {{router_.handle(), 0, ZMQ_POLLIN, 0},
                             {pull_.handle(), 0, ZMQ_POLLIN, 0}};
  auto timeout = std::chrono::milliseconds(std::max<int64_t>(0, timeout_ns / 1'000'000));
  try {
    zmq::poll(items, 2, timeout);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
  }
  for (int i = 0; i < 10000; ++i) {
    zmq::message_t msg;
    if (!pull_.recv(msg, zmq::recv_flags::dontwait)) break;
    on_result(msg);
  }
  for (int i = 0; i < 10000; ++i) {
    zmq::message_t identity;
    if (!router_.recv(identity, zmq::recv_flags::dontwait)) break;
    zmq::message_t payload;
    if (!identity.more() || !router_.recv(payload, zmq::recv_flags::dontwait)) continue;
    while (payload.more()) {  // a peer sending extra frames: drop them
      zmq::message_t extra;
      if (!router_.recv(extra, zmq::recv_flags::dontwait)) break;
    }
    on_control(identity.to_string(), payload);
  }
}

}  // namespace convoy::controller
