// ResultBatcher on a real EventLoop with a fake results socket (a function that takes or
// refuses each message). Each test runs the loop a bounded number of iterations.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "proto/envelope.hpp"
#include "test_time.hpp"
#include "worker/result_batcher.hpp"

namespace proto = convoy::proto;
using convoy::steady_now_ns;
using convoy::worker::EventLoop;
using convoy::worker::ResultBatcher;

// One namespace per test file: the helpers' names stay apart in a unity build.
namespace batcher_test {

// The results socket: takes messages while `accepting`, keeps what it took.
struct FakeResultsSocket {
  bool accepting = true;
  std::vector<std::string> taken;
  ResultBatcher::Send sender() {
    return [this](const std::string& bytes) {
      if (!accepting) return false;
      taken.push_back(bytes);
      return true;
    };
  }
};

proto::Results results_of(const std::string& bytes) {
  auto d = proto::decode(bytes.data(), bytes.size(), nullptr);
  REQUIRE(d.has_value());
  REQUIRE(d->type == proto::MsgType::kResults);
  auto r = d->as<proto::Results>();
  REQUIRE(r.has_value());
  return *r;
}

proto::Record record(uint64_t conversation_index) {
  proto::Record r;
  r.conversation_index = conversation_index;
  return r;
}

ResultBatcher::Settings settings(int64_t flush_delay_ns, size_t max_batch_records = 512) {
  return {"w-1", flush_delay_ns, max_batch_records};
}

// Runs the loop until `done()` or `timeout_ns` (bounded in iterations too).
template <class Done>
void run_until(EventLoop& loop, Done done, int64_t timeout_ns = 2 * kS) {
  const int64_t deadline = steady_now_ns() + timeout_ns;
  for (int i = 0; i < 10'000 && !done() && steady_now_ns() < deadline; ++i) {
    loop.run_once(10 * kMs);
  }
}

TEST_CASE("result batcher: records wait for the flush delay and leave as one batch") {
  EventLoop loop;
  FakeResultsSocket socket;
  ResultBatcher batcher(loop, socket.sender(), settings(50 * kMs), {});
  batcher.set_token("tok");
  const int64_t added_ns = steady_now_ns();
  batcher.add_record(record(1));
  batcher.add_record(record(2));
  loop.run_once(0);
  CHECK(socket.taken.empty());  // not before the delay
  run_until(loop, [&] { return !socket.taken.empty(); });
  REQUIRE(socket.taken.size() == 1);
  CHECK(steady_now_ns() - added_ns >= 50 * kMs);
  const proto::Results r = results_of(socket.taken[0]);
  CHECK(r.worker_id == "w-1");
  CHECK(r.token == "tok");
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[0].conversation_index == 1);
  CHECK(r.records[1].conversation_index == 2);
}

TEST_CASE("result batcher: a full batch leaves at once") {
  EventLoop loop;
  FakeResultsSocket socket;
  ResultBatcher batcher(loop, socket.sender(), settings(10 * kS, 3), {});
  for (uint64_t i = 0; i < 7; ++i) batcher.add_record(record(i));
  REQUIRE(socket.taken.size() == 2);
  CHECK(results_of(socket.taken[0]).records.size() == 3);
  CHECK(results_of(socket.taken[1]).records.size() == 3);
  batcher.flush();
  REQUIRE(socket.taken.size() == 3);
  CHECK(results_of(socket.taken[2]).records.size() == 1);
  batcher.flush();  // empty: nothing sent
  CHECK(socket.taken.size() == 3);
}

TEST_CASE("result batcher: an end that frees a slot leaves this loop iteration") {
  EventLoop loop;
  FakeResultsSocket socket;
  ResultBatcher batcher(loop, socket.sender(), settings(10 * kS), {});
  SUBCASE("send now: one iteration, with the record before it") {
    batcher.add_record(record(5));
    batcher.add_end({5, proto::EndReason::kCompleted}, /*send_now=*/true);
    batcher.add_returned(9);
    loop.run_once(0);
    REQUIRE(socket.taken.size() == 1);
    const proto::Results r = results_of(socket.taken[0]);
    CHECK(r.records.size() == 1);
    REQUIRE(r.ended.size() == 1);
    CHECK(r.ended[0].conversation_index == 5);
    CHECK(r.returned == std::vector<uint64_t>{9});
  }
  SUBCASE("refilled end: waits for the flush delay") {
    batcher.add_end({5, proto::EndReason::kCompleted, 6}, /*send_now=*/false);
    for (int i = 0; i < 3; ++i) loop.run_once(0);
    CHECK(socket.taken.empty());
    batcher.send_this_iteration();
    loop.run_once(0);
    REQUIRE(socket.taken.size() == 1);
    CHECK(results_of(socket.taken[0]).ended.at(0).refilled_by == 6);
  }
}

TEST_CASE("result batcher: refused batches are offered again in order, then the Bye") {
  EventLoop loop;
  FakeResultsSocket socket;
  int retries_after_bye = 0;
  ResultBatcher batcher(loop, socket.sender(), settings(10 * kS, 1), [&] { ++retries_after_bye; });
  socket.accepting = false;
  batcher.add_record(record(1));
  batcher.add_record(record(2));
  batcher.add_failed({3, "unreadable"});
  proto::Bye bye{"w-1", "tok", "done", 0};
  batcher.finish(&bye);
  CHECK(batcher.finished());
  CHECK(batcher.unsent() == 4);   // two records, the failure, the Bye
  batcher.add_record(record(4));  // after the Bye: never sent
  batcher.flush();
  CHECK(batcher.unsent() == 4);
  loop.run_once(0);
  CHECK(batcher.unsent() == 4);
  socket.accepting = true;
  run_until(loop, [&] { return batcher.unsent() == 0; });
  CHECK(batcher.unsent() == 0);
  CHECK(retries_after_bye >= 1);
  REQUIRE(socket.taken.size() == 4);
  CHECK(results_of(socket.taken[0]).records.at(0).conversation_index == 1);
  CHECK(results_of(socket.taken[1]).records.at(0).conversation_index == 2);
  CHECK(results_of(socket.taken[2]).failed.at(0).conversation_index == 3);
  auto last = proto::decode(socket.taken[3].data(), socket.taken[3].size(), nullptr);
  REQUIRE(last.has_value());
  CHECK(last->type == proto::MsgType::kBye);
}

}  // namespace batcher_test
