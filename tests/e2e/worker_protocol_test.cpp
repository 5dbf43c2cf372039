// The real convoy-worker against a fake controller that speaks the wire protocol over loopback
// tcp: an Assign it cannot decode in full, a controller that dies, and the token its Results
// and Bye must carry.
#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <zmq.hpp>

#include "common/zmq_util.hpp"
#include "e2e/subprocess.hpp"
#include "proto/envelope.hpp"
#include "test_util.hpp"

namespace proto = convoy::proto;
using namespace convoy::test;

namespace {

using Clock = std::chrono::steady_clock;

// ROUTER (control) and PULL (results) on loopback, as the controller binds them.
class FakeController {
 public:
  FakeController() {
    convoy::configure_socket(router_, 0);
    convoy::configure_socket(pull_, 0);
    router_.bind("tcp://127.0.0.1:0");
    pull_.bind("tcp://127.0.0.1:0");
    control_ = convoy::last_endpoint(router_);
    results_ = convoy::last_endpoint(pull_);
  }

  const std::string& control() const { return control_; }

  // Waits (bounded) for a worker's Hello; its id.
  std::optional<std::string> wait_hello(double timeout_s) {
    zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(50)) == 0) continue;
      zmq::message_t identity, payload;
      if (!router_.recv(identity) || !router_.recv(payload)) continue;
      auto d = proto::decode(payload.data(), payload.size(), nullptr);
      if (d && d->type == proto::MsgType::kHello) return worker_ = identity.to_string();
    }
    return std::nullopt;
  }

  void send_raw(const std::string& bytes) {
    router_.send(zmq::buffer(worker_), zmq::send_flags::sndmore);
    router_.send(zmq::buffer(bytes));
  }

  void welcome(const std::string& target_url, const std::string& token) {
    proto::Welcome w;
    w.run_id = "worker-protocol-test";
    w.results_endpoint = results_;
    w.settings.url = target_url;
    w.settings.endpoint = convoy::proto::Endpoint::kChat;
    w.settings.streaming = false;
    w.settings.connect_timeout_s = 2;
    w.token = token;
    send_raw(proto::encode(w));
  }

  // Reads result messages until `done(results, bye)` or the deadline.
  template <class Done>
  bool collect(double timeout_s, Done&& done) {
    zmq::pollitem_t item{pull_.handle(), 0, ZMQ_POLLIN, 0};
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (!done()) {
      if (Clock::now() > deadline) return false;
      if (zmq::poll(&item, 1, std::chrono::milliseconds(20)) == 0) continue;
      zmq::message_t msg;
      if (!pull_.recv(msg)) continue;
      auto d = proto::decode(msg.data(), msg.size(), nullptr);
      REQUIRE(d.has_value());
      if (d->type == proto::MsgType::kBye) {
        bye = d->as<proto::Bye>();
      } else if (auto r = d->as<proto::Results>()) {
        results.push_back(std::move(*r));
      }
    }
    return true;
  }

  // Closes both sockets: the controller process is gone.
  void die() {
    router_.close();
    pull_.close();
  }

  std::vector<proto::Results> results;
  std::optional<proto::Bye> bye;

 private:
  zmq::context_t ctx_;
  zmq::socket_t router_{ctx_, zmq::socket_type::router};
  zmq::socket_t pull_{ctx_, zmq::socket_type::pull};
  std::string control_;
  std::string results_;
  std::string worker_;
};

proto::Conversation protocol_conversation(uint64_t index, std::string text = "hello?") {
  proto::Conversation c;
  c.index = index;
  c.conversation_id = "conv-" + std::to_string(index);
  c.correlation_id = "5f0c8a5e-1111-4222-8333-" + std::to_string(100000000000 + index);
  c.start_ns = 0;  // due at once
  proto::Turn t;
  t.user_text = std::move(text);
  t.max_tokens = 8;
  c.turns.push_back(t);
  return c;
}

}  // namespace

TEST_CASE("a worker runs the decodable conversations of a batch and reports the others failed") {
  FakeController controller;
  // A target nothing listens on: each conversation that runs ends at once with a connect error.
  const RefusingPort refusing;
  const std::string target = refusing.url();
  Subprocess worker({bin("worker/convoy-worker"), "--connect", controller.control(), "--id", "w"});
  INFO(worker.output());
  REQUIRE(controller.wait_hello(20).has_value());
  const std::string token = "feedfacefeedfacefeedfacefeedface";
  controller.welcome(target, token);

  // Batch 1: the middle conversation has a turn over the wire's 16 MiB string limit, so the
  // message as a whole does not decode. Batch 2: its second element is not a conversation.
  proto::Assign first;
  first.batch = 1;
  first.conversations = {protocol_conversation(1),
                         protocol_conversation(2, std::string(17u << 20, 'x')),
                         protocol_conversation(3)};
  controller.send_raw(proto::encode(first));
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> pk(body);
  pk.pack_map(2);
  pk.pack("batch");
  pk.pack(uint64_t{2});
  pk.pack("conversations");
  pk.pack_array(3);
  pk.pack(protocol_conversation(4));
  pk.pack("not a conversation");
  pk.pack(protocol_conversation(5));
  controller.send_raw(proto::encode_raw(proto::MsgType::kAssign, body, proto::kProtocolVersion));

  std::set<uint64_t> ended, failed, recorded;
  std::optional<proto::UndecodableAssign> unreadable;
  auto tally = [&] {
    for (const auto& r : controller.results) {
      CHECK(r.token == token);
      for (const auto& e : r.ended) ended.insert(e.conversation_index);
      for (const auto& f : r.failed) {
        failed.insert(f.conversation_index);
        CHECK_MESSAGE(f.error.find("str size overflow") != std::string::npos, f.error);
      }
      for (const auto& rec : r.records) recorded.insert(rec.conversation_index);
      for (const auto& u : r.undecodable) unreadable = u;
    }
    controller.results.clear();
  };
  REQUIRE(controller.collect(20, [&] {
    tally();
    return ended.size() == 4 && failed.size() == 1 && unreadable.has_value();
  }));
  CHECK(ended == std::set<uint64_t>{1, 3, 4, 5});
  CHECK(recorded == std::set<uint64_t>{1, 3, 4, 5});
  CHECK(failed == std::set<uint64_t>{2});
  REQUIRE(unreadable.has_value());
  CHECK(unreadable->batch == 2);
  CHECK(unreadable->positions == std::vector<uint32_t>{1});

  controller.send_raw(proto::encode(proto::Stop{true}));
  REQUIRE(controller.collect(20, [&] { return controller.bye.has_value(); }));
  CHECK(controller.bye->token == token);
  auto rc = worker.wait(20);
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
}

TEST_CASE("a worker whose controller dies exits within the promised 5 s") {
  LoopbackListener target;  // accepts and never answers: the request stays in flight
  FakeController controller;
  Subprocess worker(
      {bin("worker/convoy-worker"), "--connect", controller.control(), "--id", "orphaned"});
  INFO(worker.output());
  REQUIRE(controller.wait_hello(20).has_value());
  controller.welcome(target.url(), "t");
  proto::Assign assign;
  assign.batch = 1;
  assign.conversations = {protocol_conversation(0)};
  controller.send_raw(proto::encode(assign));
  // The controller process goes away; its last word was the Assign.
  controller.die();
  const auto died_at = Clock::now();
  auto rc = worker.wait(15);
  const double waited_s = std::chrono::duration<double>(Clock::now() - died_at).count();
  REQUIRE(rc.has_value());
  CHECK(*rc == 3);
  MESSAGE("worker exited " << waited_s << " s after the controller died");
  CHECK(waited_s >= 4.5);
  CHECK(waited_s < 6.0);  // 5 s of silence, then the cancel and exit (7 s before the fix)
  CHECK(worker.output().find("no word from the controller") != std::string::npos);
}
