// Worker (its Impl: registration, batching, queue-full retry, shutdown, controller silence)
// over inproc:// against a controller played by the test, with a FakeTransport for HTTP and
// short liveness periods. The worker runs on a thread of its own; no test sleeps: each waits
// for a message or the worker's exit with a bounded deadline.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "common/zmq_util.hpp"
#include "proto/envelope.hpp"
#include "test_time.hpp"
#include "worker/fake_transport.hpp"
#include "worker/worker.hpp"

namespace proto = convoy::proto;
using convoy::steady_now_ns;
using convoy::worker::EventLoop;
using convoy::worker::HttpRequest;
using convoy::worker::Transport;
using convoy::worker::Worker;
using convoy::worker::WorkerOptions;
using convoy::worker::WorkerSeams;
using convoy::worker::test::DeliveryCount;
using convoy::worker::test::FakeTransport;

namespace {

constexpr int64_t kSec = 1000 * kMs;

// The controller's two sockets, bound on inproc:// in the test's context.
class InprocController {
 public:
  explicit InprocController(int results_rcvhwm = 0) {
    static std::atomic<int> serial{0};
    const std::string base = "inproc://worker-test-" + std::to_string(++serial);
    control_ = base + "-control";
    results_ = base + "-results";
    convoy::configure_socket(router_, 0);
    convoy::configure_socket(pull_, 0);
    if (results_rcvhwm > 0) pull_.set(zmq::sockopt::rcvhwm, results_rcvhwm);
    router_.bind(control_);
    pull_.bind(results_);
  }

  zmq::context_t& context() { return ctx_; }
  const std::string& control() const { return control_; }

  // The next control message of type `type` (others, e.g. heartbeats, are skipped), waiting at
  // most `timeout_ns`.
  std::optional<proto::Decoded> expect_control(proto::MsgType type, int64_t timeout_ns = kSec) {
    const int64_t deadline = steady_now_ns() + timeout_ns;
    zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
    while (steady_now_ns() < deadline) {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(10)) == 0) continue;
      zmq::message_t identity, payload;
      if (!router_.recv(identity) || !router_.recv(payload)) continue;
      auto d = proto::decode(payload.data(), payload.size(), nullptr);
      if (!d || d->type != type) continue;
      worker_ = identity.to_string();
      return d;
    }
    return std::nullopt;
  }

  template <class T>
  void send(const T& msg) {
    const std::string bytes = proto::encode(msg);
    router_.send(zmq::buffer(worker_), zmq::send_flags::sndmore);
    router_.send(zmq::buffer(bytes));
  }

  // Waits for the Hello and answers with a Welcome; false when no Hello came.
  bool welcome(const std::string& token = "tok") {
    if (!expect_control(proto::MsgType::kHello)) return false;
    proto::Welcome w;
    w.run_id = "worker-test";
    w.results_endpoint = results_;
    w.settings.url = "http://127.0.0.1:9";  // the transport is a fake
    w.settings.api_key_env.clear();
    w.token = token;
    send(w);
    return true;
  }

  void assign(std::vector<proto::Conversation> conversations, uint64_t batch = 1) {
    proto::Assign a;
    a.batch = batch;
    a.conversations = std::move(conversations);
    send(a);
  }

  // One message from the results socket within `timeout_ns`; nullopt when none came.
  std::optional<proto::Decoded> next_result(int64_t timeout_ns = kSec) {
    zmq::pollitem_t item{pull_.handle(), 0, ZMQ_POLLIN, 0};
    const int64_t deadline = steady_now_ns() + timeout_ns;
    do {
      if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ns > 0 ? 10 : 0)) == 0) continue;
      zmq::message_t msg;
      if (!pull_.recv(msg)) continue;
      auto d = proto::decode(msg.data(), msg.size(), nullptr);
      REQUIRE(d.has_value());
      return d;
    } while (steady_now_ns() < deadline);
    return std::nullopt;
  }

 private:
  zmq::context_t ctx_;
  zmq::socket_t router_{ctx_, zmq::socket_type::router};
  zmq::socket_t pull_{ctx_, zmq::socket_type::pull};
  std::string control_;
  std::string results_;
  std::string worker_;
};

// Short periods; a controller that stops talking ends every test's worker within 2 s.
WorkerOptions options_for(const InprocController& controller) {
  WorkerOptions o;
  o.connect = controller.control();
  o.id = "w-test";
  o.first_contact_timeout_s = 2;
  o.controller_silence_s = 2;
  o.heartbeat_period_s = 0.05;
  return o;
}

// A Worker on its own thread, joined at scope exit.
class WorkerThread {
 public:
  WorkerThread(InprocController& controller, WorkerOptions options, WorkerSeams seams = {}) {
    seams.context = &controller.context();
    worker_ = std::make_unique<Worker>(std::move(options), std::move(seams));
    thread_ = std::thread([this] {
      const int code = worker_->run();
      exited_ns_ = steady_now_ns();
      exit_code_.set_value(code);
    });
  }
  ~WorkerThread() {
    if (thread_.joinable()) thread_.join();
  }
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  // The exit code once run() returned within `timeout_ns`; nullopt while it still runs.
  std::optional<int> wait_exit(int64_t timeout_ns) {
    if (exit_.wait_for(std::chrono::nanoseconds(timeout_ns)) != std::future_status::ready) {
      return std::nullopt;
    }
    thread_.join();
    return exit_.get();
  }
  int64_t exited_ns() const { return exited_ns_; }

 private:
  std::unique_ptr<Worker> worker_;
  std::promise<int> exit_code_;
  std::future<int> exit_ = exit_code_.get_future();
  std::atomic<int64_t> exited_ns_{0};
  std::thread thread_;
};

// A FakeTransport for the worker's loop: answers at once when `auto_reply`, else holds every
// request until it is cancelled; counts the callbacks it delivered.
WorkerSeams fake_http(DeliveryCount* delivered, bool auto_reply) {
  WorkerSeams seams;
  seams.make_transport = [delivered, auto_reply](EventLoop& loop) -> std::unique_ptr<Transport> {
    auto t = std::make_unique<FakeTransport>(loop);
    if (auto_reply) t->auto_reply = [](const HttpRequest&) { return FakeTransport::ok(); };
    t->delivered_counter = delivered;
    return t;
  };
  return seams;
}

proto::Conversation worker_conversation(uint64_t index, int turns = 1) {
  proto::Conversation c;
  c.index = index;
  c.conversation_id = "conv-" + std::to_string(index);
  c.correlation_id = "corr-" + std::to_string(index);
  for (int k = 0; k < turns; ++k) {
    proto::Turn t;
    t.user_text = "hello " + std::to_string(k);
    c.turns.push_back(t);
  }
  return c;
}

bool wait_for(const DeliveryCount& counter, size_t n, int64_t timeout_ns = 2 * kSec) {
  return counter.wait_for(n, std::chrono::nanoseconds(timeout_ns));
}

// Everything on the results socket up to and including the Bye.
struct Collected {
  std::vector<proto::Results> results;
  std::optional<proto::Bye> bye;
  size_t after_bye = 0;  // messages that came after it (must be none)
};

Collected collect_until_bye(InprocController& controller, int64_t timeout_ns = 3 * kSec) {
  Collected out;
  const int64_t deadline = steady_now_ns() + timeout_ns;
  while (!out.bye && steady_now_ns() < deadline) {
    auto d = controller.next_result(deadline - steady_now_ns());
    if (!d) break;
    if (d->type == proto::MsgType::kBye) {
      out.bye = d->as<proto::Bye>();
    } else if (auto r = d->as<proto::Results>()) {
      out.results.push_back(std::move(*r));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("worker: a Reject from the controller makes it exit 2") {
  InprocController controller;
  WorkerThread worker(controller, options_for(controller));
  REQUIRE(controller.expect_control(proto::MsgType::kHello));
  controller.send(proto::Reject{"protocol version 1, expected 3"});
  CHECK(worker.wait_exit(2 * kSec) == 2);
}

TEST_CASE("worker: a Reject for want of a slot is retried for retry_s, then it exits 2") {
  InprocController controller;
  DeliveryCount delivered;
  WorkerThread worker(controller, options_for(controller), fake_http(&delivered, true));
  REQUIRE(controller.expect_control(proto::MsgType::kHello));
  const int64_t refused_at = steady_now_ns();
  controller.send(proto::Reject{"no slot", 0.5});
  // It keeps saying hello (every heartbeat_period_s) instead of exiting.
  REQUIRE(controller.expect_control(proto::MsgType::kHello));
  REQUIRE(controller.expect_control(proto::MsgType::kHello));
  CHECK_FALSE(worker.wait_exit(0).has_value());

  SUBCASE("a slot that frees up in time lets it join") {
    REQUIRE(controller.welcome());
    controller.send(proto::Stop{true});
    auto collected = collect_until_bye(controller);
    CHECK(collected.bye.has_value());
    CHECK(worker.wait_exit(2 * kSec) == 0);
  }
  SUBCASE("no slot within retry_s: exit 2, not before") {
    CHECK(worker.wait_exit(3 * kSec) == 2);
    CHECK(worker.exited_ns() - refused_at >= 500 * kMs);
  }
}

TEST_CASE("worker: a batch is sent as soon as it holds max_batch_records") {
  InprocController controller;
  WorkerOptions o = options_for(controller);
  o.max_batch_records = 3;
  o.flush_interval_s = 30;  // never reached: the size sends it
  DeliveryCount delivered;
  WorkerThread worker(controller, o, fake_http(&delivered, /*auto_reply=*/true));
  REQUIRE(controller.welcome());
  proto::Conversation c = worker_conversation(7, 4);
  c.turns[3].delay_ms = 60'000;  // three records, then the conversation waits
  controller.assign({c});
  auto first = controller.next_result(2 * kSec);
  REQUIRE(first);
  REQUIRE(first->type == proto::MsgType::kResults);
  auto batch = first->as<proto::Results>();
  REQUIRE(batch);
  CHECK(batch->records.size() == 3);
  CHECK(batch->ended.empty());
  CHECK(batch->token == "tok");
  controller.send(proto::Stop{true});
  Collected rest = collect_until_bye(controller);
  CHECK(rest.bye.has_value());
  CHECK(worker.wait_exit(2 * kSec) == 0);
}

TEST_CASE("worker: a batch smaller than max_batch_records is sent after flush_interval_s") {
  InprocController controller;
  WorkerOptions o = options_for(controller);
  o.flush_interval_s = 0.1;
  DeliveryCount delivered;
  WorkerThread worker(controller, o, fake_http(&delivered, /*auto_reply=*/true));
  REQUIRE(controller.welcome());
  proto::Conversation c = worker_conversation(7, 2);
  c.turns[1].delay_ms = 60'000;  // one record, no end: only the interval sends it
  controller.assign({c});
  auto first = controller.next_result(2 * kSec);
  const int64_t arrived_ns = steady_now_ns();
  REQUIRE(first);
  auto batch = first->as<proto::Results>();
  REQUIRE(batch);
  REQUIRE(batch->records.size() == 1);
  CHECK(batch->ended.empty());
  // The worker shares this process's steady clock: the record waited the interval.
  CHECK(arrived_ns - batch->records[0].end_ns >= 100 * kMs);
  CHECK(arrived_ns - batch->records[0].end_ns < 1500 * kMs);
  controller.send(proto::Stop{true});
  CHECK(collect_until_bye(controller).bye.has_value());
  CHECK(worker.wait_exit(2 * kSec) == 0);
}

TEST_CASE("worker: batches the full results queue refused are retried and none is lost") {
  InprocController controller(/*results_rcvhwm=*/1);
  WorkerOptions o = options_for(controller);
  o.max_batch_records = 1;  // one message per record
  WorkerSeams seams;
  DeliveryCount delivered;
  seams = fake_http(&delivered, /*auto_reply=*/true);
  seams.results_send_hwm = 1;  // the queue holds about two messages
  WorkerThread worker(controller, o, std::move(seams));
  REQUIRE(controller.welcome());
  constexpr size_t kConversations = 40;
  std::vector<proto::Conversation> batch;
  for (uint64_t k = 0; k < kConversations; ++k) batch.push_back(worker_conversation(k));
  controller.assign(std::move(batch));
  // Every reply is in before the controller reads anything: most batches wait in the worker.
  REQUIRE(wait_for(delivered, kConversations));
  std::multiset<uint64_t> records, ended;
  const int64_t deadline = steady_now_ns() + 3 * kSec;
  while ((records.size() < kConversations || ended.size() < kConversations) &&
         steady_now_ns() < deadline) {
    auto d = controller.next_result(deadline - steady_now_ns());
    if (!d) break;
    auto r = d->as<proto::Results>();
    REQUIRE(r);
    for (const auto& rec : r->records) records.insert(rec.conversation_index);
    for (const auto& e : r->ended) ended.insert(e.conversation_index);
  }
  CHECK(records.size() == kConversations);
  CHECK(ended.size() == kConversations);
  for (uint64_t k = 0; k < kConversations; ++k) {
    CHECK(records.count(k) == 1);
    CHECK(ended.count(k) == 1);
  }
  controller.send(proto::Stop{true});
  CHECK(collect_until_bye(controller).bye.has_value());
  CHECK(worker.wait_exit(2 * kSec) == 0);
}

TEST_CASE("worker: after a cancelling Stop the Bye comes after the last batch") {
  InprocController controller;
  DeliveryCount delivered;
  WorkerThread worker(controller, options_for(controller),
                      fake_http(&delivered, /*auto_reply=*/false));  // requests hang
  REQUIRE(controller.welcome("secret"));
  std::vector<proto::Conversation> batch;
  for (uint64_t k = 0; k < 5; ++k) batch.push_back(worker_conversation(k, 2));
  controller.assign(std::move(batch));
  // The heartbeat says when all five requests are in flight.
  const int64_t deadline = steady_now_ns() + 2 * kSec;
  int64_t in_flight = 0;
  while (in_flight < 5 && steady_now_ns() < deadline) {
    auto hb = controller.expect_control(proto::MsgType::kHeartbeat, deadline - steady_now_ns());
    if (hb) in_flight = hb->as<proto::Heartbeat>()->in_flight_requests;
  }
  REQUIRE(in_flight == 5);
  const int64_t stop_ns = steady_now_ns();
  controller.send(proto::Stop{true});
  Collected got = collect_until_bye(controller);
  REQUIRE(got.bye.has_value());
  CHECK(got.bye->token == "secret");
  CHECK(got.bye->worker_id == "w-test");
  size_t records = 0, ended = 0;
  for (const auto& r : got.results) {
    for (const auto& rec : r.records) {
      CHECK(rec.error.kind == proto::ErrorKind::kCancelled);
      ++records;
    }
    for (const auto& e : r.ended) {
      CHECK(e.reason == proto::EndReason::kCancelled);
      ++ended;
    }
  }
  CHECK(records == 5);
  CHECK(ended == 5);
  REQUIRE(worker.wait_exit(2 * kSec) == 0);
  // Event-driven: the shutdown ended when the last cancelled transfer reported, not at the
  // 5 s drain deadline.
  CHECK(worker.exited_ns() - stop_ns < 1 * kSec);
  CHECK_FALSE(controller.next_result(0).has_value());  // nothing after the Bye
}

TEST_CASE("worker: a shutdown whose results nobody takes ends at the send deadline") {
  InprocController controller(/*results_rcvhwm=*/1);
  WorkerOptions o = options_for(controller);
  o.max_batch_records = 1;
  o.results_linger_s = 0.3;
  DeliveryCount delivered;
  WorkerSeams seams = fake_http(&delivered, /*auto_reply=*/true);
  seams.results_send_hwm = 1;
  WorkerThread worker(controller, o, std::move(seams));
  REQUIRE(controller.welcome());
  std::vector<proto::Conversation> batch;
  for (uint64_t k = 0; k < 10; ++k) batch.push_back(worker_conversation(k));
  controller.assign(std::move(batch));
  REQUIRE(wait_for(delivered, 10));
  const int64_t stop_ns = steady_now_ns();
  controller.send(proto::Stop{true});
  // The controller never reads: the Bye cannot be queued. Blocking on it would hang the
  // worker; it gives up results_linger_s after the last transfer ended.
  REQUIRE(worker.wait_exit(3 * kSec) == 0);
  CHECK(worker.exited_ns() - stop_ns >= 300 * kMs);
  CHECK(worker.exited_ns() - stop_ns < 1500 * kMs);
}

TEST_CASE("worker: controller silence cancels everything and exits 3 within the timeout") {
  InprocController controller;
  WorkerOptions o = options_for(controller);
  o.controller_silence_s = 0.3;
  DeliveryCount delivered;
  WorkerThread worker(controller, o, fake_http(&delivered, /*auto_reply=*/false));
  REQUIRE(controller.welcome());
  controller.assign({worker_conversation(1, 2)});
  const int64_t last_word_ns = steady_now_ns();  // the controller says nothing after this
  REQUIRE(worker.wait_exit(2 * kSec) == 3);
  CHECK(worker.exited_ns() - last_word_ns >= 300 * kMs);
  CHECK(worker.exited_ns() - last_word_ns < 1000 * kMs);
  CHECK(delivered.value() == 1);  // the request in flight was cancelled and reported
}

namespace {

// Results until `ended` conversations ended (or the deadline): every end, in order.
std::vector<proto::ConversationEnd> collect_ends(InprocController& controller, size_t ended,
                                                 std::vector<uint64_t>* recorded = nullptr) {
  std::vector<proto::ConversationEnd> ends;
  const int64_t deadline = steady_now_ns() + 3 * kSec;
  while (ends.size() < ended && steady_now_ns() < deadline) {
    auto d = controller.next_result(deadline - steady_now_ns());
    if (!d || d->type != proto::MsgType::kResults) continue;
    auto r = d->as<proto::Results>();
    REQUIRE(r.has_value());
    for (const auto& rec : r->records) {
      if (recorded) recorded->push_back(rec.conversation_index);
    }
    ends.insert(ends.end(), r->ended.begin(), r->ended.end());
  }
  return ends;
}

}  // namespace

TEST_CASE("worker: a window conversation starts in the slot an end frees and the end names it") {
  InprocController controller;
  DeliveryCount delivered;
  WorkerThread worker(controller, options_for(controller), fake_http(&delivered, true));
  REQUIRE(controller.welcome());
  proto::Assign window;
  window.batch = 1;
  window.window = true;
  window.conversations = {worker_conversation(10), worker_conversation(11)};
  controller.send(window);
  controller.assign({worker_conversation(1)}, 2);
  std::vector<uint64_t> recorded;
  const auto ends = collect_ends(controller, 3, &recorded);
  REQUIRE(ends.size() == 3);
  // One slot throughout: 1 ends and 10 starts in its slot, then 11 in 10's; 11's end finds the
  // window empty and gives the slot back.
  CHECK(ends[0].conversation_index == 1u);
  CHECK(ends[0].refilled_by == 10);
  CHECK(ends[1].conversation_index == 10u);
  CHECK(ends[1].refilled_by == 11);
  CHECK(ends[2].conversation_index == 11u);
  CHECK(ends[2].refilled_by == -1);
  CHECK(recorded == std::vector<uint64_t>{1, 10, 11});
  controller.send(proto::Stop{true});
  CHECK(worker.wait_exit(3 * kSec) == 0);
}

TEST_CASE("worker: a start runs a window conversation and a Stop gives the rest back unstarted") {
  InprocController controller;
  DeliveryCount delivered;
  WorkerThread worker(controller, options_for(controller), fake_http(&delivered, false));
  REQUIRE(controller.welcome());
  proto::Assign window;
  window.batch = 1;
  window.window = true;
  window.conversations = {worker_conversation(20), worker_conversation(21),
                          worker_conversation(22)};
  controller.send(window);
  proto::Assign start;
  start.batch = 2;
  start.window = true;
  start.start = {{21, steady_now_ns()}, {99, steady_now_ns()}};  // 99: not here, ignored
  controller.send(start);
  const int64_t deadline = steady_now_ns() + 2 * kSec;
  int64_t in_flight = 0;
  while (in_flight < 1 && steady_now_ns() < deadline) {
    auto hb = controller.expect_control(proto::MsgType::kHeartbeat, deadline - steady_now_ns());
    if (hb) in_flight = hb->as<proto::Heartbeat>()->in_flight_requests;
  }
  REQUIRE(in_flight == 1);
  controller.send(proto::Stop{false});  // 20 and 22 go back; 21 is cancelled below
  controller.send(proto::Stop{true});
  Collected got = collect_until_bye(controller);
  REQUIRE(got.bye.has_value());
  std::vector<uint64_t> returned, ended, recorded;
  for (const auto& r : got.results) {
    returned.insert(returned.end(), r.returned.begin(), r.returned.end());
    for (const auto& e : r.ended) {
      ended.push_back(e.conversation_index);
      CHECK(e.refilled_by == -1);  // the window was closed: nothing refilled the slot
    }
    for (const auto& rec : r.records) recorded.push_back(rec.conversation_index);
  }
  CHECK(returned == std::vector<uint64_t>{20, 22});
  CHECK(ended == std::vector<uint64_t>{21});
  CHECK(recorded == std::vector<uint64_t>{21});
  CHECK(worker.wait_exit(3 * kSec) == 0);
}

TEST_CASE("worker: a salvaged window batch waits in the window and starts only in freed slots") {
  InprocController controller;
  DeliveryCount delivered;
  WorkerThread worker(controller, options_for(controller), fake_http(&delivered, true));
  REQUIRE(controller.welcome());
  // Over the decoder's 16 MiB string limit: the batch does not decode whole and is salvaged.
  proto::Conversation heavy = worker_conversation(12);
  heavy.turns[0].user_text.assign(17u << 20, 'x');
  proto::Assign window;
  window.batch = 1;
  window.window = true;
  window.conversations = {worker_conversation(10), std::move(heavy), worker_conversation(11)};
  controller.send(window);
  // The heavy one is reported failed; the two others wait for a slot: a heartbeat after the
  // report shows nothing running (they used to start at once, outside every slot).
  std::vector<uint64_t> failed, early_records;
  const int64_t deadline = steady_now_ns() + 3 * kSec;
  while (failed.empty() && steady_now_ns() < deadline) {
    auto d = controller.next_result(deadline - steady_now_ns());
    if (!d || d->type != proto::MsgType::kResults) continue;
    auto r = d->as<proto::Results>();
    REQUIRE(r.has_value());
    for (const auto& f : r->failed) failed.push_back(f.conversation_index);
    for (const auto& rec : r->records) early_records.push_back(rec.conversation_index);
  }
  CHECK(failed == std::vector<uint64_t>{12});
  const int64_t reported_ns = steady_now_ns();  // the worker's clock too: one process
  std::optional<proto::Heartbeat> hb;
  while (!hb && steady_now_ns() < deadline) {
    auto d = controller.expect_control(proto::MsgType::kHeartbeat, deadline - steady_now_ns());
    if (!d) break;
    auto h = d->as<proto::Heartbeat>();
    if (h && h->sent_ns > reported_ns) hb = h;  // one sent after the salvage, not a queued one
  }
  REQUIRE(hb.has_value());
  CHECK(hb->active_conversations == 0);
  CHECK(early_records.empty());
  // One conversation in one slot: 10 and then 11 follow it in that slot.
  controller.assign({worker_conversation(1)}, 2);
  std::vector<uint64_t> recorded;
  const auto ends = collect_ends(controller, 3, &recorded);
  REQUIRE(ends.size() == 3);
  CHECK(ends[0].conversation_index == 1u);
  CHECK(ends[0].refilled_by == 10);
  CHECK(ends[1].conversation_index == 10u);
  CHECK(ends[1].refilled_by == 11);
  CHECK(ends[2].conversation_index == 11u);
  CHECK(ends[2].refilled_by == -1);
  CHECK(recorded == std::vector<uint64_t>{1, 10, 11});
  controller.send(proto::Stop{true});
  CHECK(worker.wait_exit(3 * kSec) == 0);
}
