// The worker's conversation with the controller on the control socket (DEALER): Hello until the
// Welcome (or a refusal, or first_contact_timeout_s of silence), then a heartbeat every period,
// Pongs for Pings, and the controller's Assign and Stop handed to the worker. It watches the
// controller's liveness: controller_silence_s without a word and the worker is told it lost the
// controller. The Bye does not travel here: it follows the last batch on the results socket.
#pragma once

#include <cstdint>
#include <string>
#include <zmq.hpp>

#include "proto/messages.hpp"
#include "worker/event_loop.hpp"
#include "worker/proc_stats.hpp"
#include "worker/worker.hpp"

namespace convoy::worker {

// CURVE for one of the worker's sockets, when the options name the controller's key.
void apply_worker_curve(zmq::socket_t& socket, const WorkerOptions& options);

class ControlSession {
 public:
  // What the session hands to the worker. Every call comes from the event loop.
  class Handler {
   public:
    // The first Welcome. False when the run cannot start here (the worker ends itself).
    virtual bool on_welcome(const proto::Welcome& welcome) = 0;
    virtual void on_assign(proto::Assign& assign) = 0;
    // A message that did not decode as a whole: false when it is not an Assign either.
    virtual bool on_undecodable_assign(const zmq::message_t& message) = 0;
    virtual void on_stop(bool cancel) = 0;
    // Refused for good, or no controller answered: end the worker with `exit_code`.
    virtual void on_give_up(int exit_code) = 0;
    // No word from the controller for controller_silence_s after the Welcome.
    virtual void on_controller_lost() = 0;
    // The worker's load, for a heartbeat (in-flight requests, conversations, open sessions).
    virtual void fill_heartbeat(proto::Heartbeat& heartbeat) = 0;

   protected:
    ~Handler() = default;
  };

  // `options` and `handler` are borrowed and must outlive the session, like `loop`.
  ControlSession(EventLoop& loop, zmq::context_t& context, const WorkerOptions& options,
                 std::string host, Handler& handler);
  ~ControlSession();
  ControlSession(const ControlSession&) = delete;
  ControlSession& operator=(const ControlSession&) = delete;

  // Connects, says Hello and starts the heartbeat timer.
  void start();
  // The worker is shutting down: silence no longer matters.
  void stop_watching() { watching_ = false; }
  // Before the loop is gone: nothing that matters is left to send on the control socket.
  void close() { socket_.set(zmq::sockopt::linger, 0); }

  bool welcomed() const { return welcomed_; }
  const std::string& token() const { return token_; }

 private:
  template <class T>
  void send(const T& message);
  void drain();
  void on_message(zmq::message_t& message);
  void on_welcome(const proto::Welcome& welcome);
  void on_reject(const proto::Reject& reject);
  void send_hello();
  void send_heartbeat();
  void start_heartbeat();
  void on_tick();
  void give_up(int exit_code);
  void arm_silence_check();

  EventLoop& loop_;
  const WorkerOptions& options_;
  const std::string host_;
  Handler& handler_;
  zmq::socket_t socket_;  // DEALER to options_.connect
  const int64_t heartbeat_period_ns_;
  // The heartbeat's periodic timerfd (-1: none): a file descriptor, served every loop
  // iteration, so a burst of due timers (a family's sub-agents all starting) never delays a
  // heartbeat by more than kMaxTimersPerIteration of them.
  int heartbeat_fd_ = -1;
  const int64_t started_ns_ = steady_now_ns();  // first_contact_timeout_s counts from here
  int64_t last_heard_ns_ = 0;                   // steady ns of the last control message read
  bool welcomed_ = false;
  std::string token_;  // from the Welcome: proves our Results and Bye are ours
  // Refused for want of a free slot (Reject::retry_s): hellos go on until this deadline
  // (steady ns; 0 = never refused so).
  int64_t retry_until_ns_ = 0;
  std::string refused_reason_;  // the refusal that set retry_until_ns_
  bool watching_ = true;        // the silence check still ends the worker
  bool draining_ = false;       // inside drain(): a send's re-check does not recurse
  CpuMeter cpu_;
};

}  // namespace convoy::worker
