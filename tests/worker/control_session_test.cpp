// ControlSession over inproc:// against a controller ROUTER played by the test, with a handler
// that records what the session hands over. The session's loop runs on the test thread, a
// bounded number of iterations; nothing sleeps.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/zmq_util.hpp"
#include "proto/envelope.hpp"
#include "test_time.hpp"
#include "worker/control_session.hpp"

namespace proto = convoy::proto;
using convoy::steady_now_ns;
using convoy::worker::ControlSession;
using convoy::worker::EventLoop;
using convoy::worker::WorkerOptions;

// One namespace per test file: the helpers' names stay apart in a unity build.
namespace control_session_test {

struct RecordingHandler final : ControlSession::Handler {
  int welcomes = 0;
  bool accept_welcome = true;
  std::vector<uint64_t> assigned_batches;
  std::vector<bool> stops;  // each Stop's cancel flag
  std::optional<int> gave_up;
  bool lost = false;

  bool on_welcome(const proto::Welcome&) override {
    ++welcomes;
    return accept_welcome;
  }
  void on_assign(proto::Assign& a) override { assigned_batches.push_back(a.batch); }
  bool on_undecodable_assign(const zmq::message_t&) override { return false; }
  void on_stop(bool cancel) override { stops.push_back(cancel); }
  void on_give_up(int exit_code) override { gave_up = exit_code; }
  void on_controller_lost() override { lost = true; }
  void fill_heartbeat(proto::Heartbeat& hb) override { hb.active_conversations = 7; }
};

// The controller's control socket, and a session connected to it.
class Fixture {
 public:
  Fixture() {
    static std::atomic<int> serial{0};
    options.connect = "inproc://control-session-test-" + std::to_string(++serial);
    options.id = "w-session";
    options.heartbeat_period_s = 0.02;
    options.first_contact_timeout_s = 0.2;
    options.controller_silence_s = 0.2;
    convoy::configure_socket(router, 0);
    router.bind(options.connect);
  }

  // Runs the session's loop until a control message of `type` reaches the controller (others
  // are skipped) or `timeout_ns` passes.
  std::optional<proto::Decoded> expect(proto::MsgType type, int64_t timeout_ns = 2 * kS) {
    const int64_t deadline = steady_now_ns() + timeout_ns;
    for (int i = 0; i < 10'000 && steady_now_ns() < deadline; ++i) {
      loop.run_once(5 * kMs);
      zmq::message_t identity, payload;
      while (router.recv(identity, zmq::recv_flags::dontwait)) {
        if (!router.recv(payload)) break;
        peer = identity.to_string();
        auto d = proto::decode(payload.data(), payload.size(), nullptr);
        if (d && d->type == type) return d;
      }
    }
    return std::nullopt;
  }

  template <class T>
  void send(const T& msg) {
    const std::string bytes = proto::encode(msg);
    router.send(zmq::buffer(peer), zmq::send_flags::sndmore);
    router.send(zmq::buffer(bytes));
  }

  // Runs the loop until `done()` or `timeout_ns`.
  template <class Done>
  void run_until(Done done, int64_t timeout_ns = 2 * kS) {
    const int64_t deadline = steady_now_ns() + timeout_ns;
    for (int i = 0; i < 10'000 && !done() && steady_now_ns() < deadline; ++i) {
      loop.run_once(5 * kMs);
    }
  }

  zmq::context_t ctx;
  zmq::socket_t router{ctx, zmq::socket_type::router};
  WorkerOptions options;
  std::string peer;
  EventLoop loop;
  RecordingHandler handler;
};

TEST_CASE("control session: hello, welcome, then heartbeats carrying the worker's load") {
  Fixture f;
  ControlSession session(f.loop, f.ctx, f.options, "host-a", f.handler);
  session.start();
  auto hello = f.expect(proto::MsgType::kHello);
  REQUIRE(hello.has_value());
  CHECK(hello->as<proto::Hello>()->worker_id == "w-session");
  CHECK(f.expect(proto::MsgType::kHello).has_value());  // said again until welcomed
  proto::Welcome w;
  w.token = "tok-1";
  f.send(w);
  auto hb = f.expect(proto::MsgType::kHeartbeat);
  REQUIRE(hb.has_value());
  CHECK(hb->as<proto::Heartbeat>()->active_conversations == 7);
  CHECK(session.welcomed());
  CHECK(session.token() == "tok-1");
  CHECK(f.handler.welcomes == 1);
  f.send(w);  // a second Welcome changes nothing
  proto::Ping ping{42, 1234};
  f.send(ping);
  auto pong = f.expect(proto::MsgType::kPong);
  REQUIRE(pong.has_value());
  CHECK(pong->as<proto::Pong>()->seq == 42);
  CHECK(pong->as<proto::Pong>()->controller_send_ns == 1234);
  CHECK(f.handler.welcomes == 1);
  session.close();
}

TEST_CASE("control session: assignments and stops go to the worker") {
  Fixture f;
  ControlSession session(f.loop, f.ctx, f.options, "host-a", f.handler);
  session.start();
  REQUIRE(f.expect(proto::MsgType::kHello).has_value());
  f.send(proto::Welcome{});
  proto::Assign a;
  a.batch = 3;
  f.send(a);
  f.send(proto::Stop{false});
  f.send(proto::Stop{true});
  f.run_until([&] { return f.handler.stops.size() == 2; });
  CHECK(f.handler.assigned_batches == std::vector<uint64_t>{3});
  CHECK(f.handler.stops == std::vector<bool>{false, true});
  CHECK_FALSE(f.handler.gave_up.has_value());
  session.close();
}

TEST_CASE("control session: giving up and losing the controller") {
  Fixture f;
  ControlSession session(f.loop, f.ctx, f.options, "host-a", f.handler);
  session.start();
  REQUIRE(f.expect(proto::MsgType::kHello).has_value());
  SUBCASE("a refusal for good: exit 2") {
    proto::Reject r;
    r.reason = "bad token";
    f.send(r);
    f.run_until([&] { return f.handler.gave_up.has_value(); });
    CHECK(f.handler.gave_up == 2);
  }
  SUBCASE("a refusal for want of a slot: hellos go on, then exit 2 when retry_s ran out") {
    proto::Reject r;
    r.reason = "no slot";
    r.retry_s = 0.1;
    f.send(r);
    CHECK(f.expect(proto::MsgType::kHello).has_value());
    CHECK_FALSE(f.handler.gave_up.has_value());
    f.run_until([&] { return f.handler.gave_up.has_value(); });
    CHECK(f.handler.gave_up == 2);
  }
  SUBCASE("no answer within first_contact_timeout_s: exit 3") {
    f.run_until([&] { return f.handler.gave_up.has_value(); });
    CHECK(f.handler.gave_up == 3);
  }
  SUBCASE("silence after the welcome: the controller is lost") {
    f.send(proto::Welcome{});
    f.run_until([&] { return f.handler.lost; });
    CHECK(f.handler.lost);
    CHECK_FALSE(f.handler.gave_up.has_value());
  }
  SUBCASE("silence while shutting down does not matter") {
    f.send(proto::Welcome{});
    REQUIRE(f.expect(proto::MsgType::kHeartbeat).has_value());
    session.stop_watching();
    const int64_t until = steady_now_ns() + 400 * kMs;
    f.run_until([&] { return steady_now_ns() > until; }, 1 * kS);
    CHECK_FALSE(f.handler.lost);
  }
  session.close();
}

}  // namespace control_session_test
