// Concurrency refill windows under load.requests and warmup: which phases are
// windowed, and how a window conversation's grant of requests comes back (a return) or stays
// committed (a lost worker).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/run/assigner.hpp"
#include "controller/run/in_flight.hpp"

using convoy::LoadConfig;
using convoy::LoadMode;
using convoy::ProfileKind;
using convoy::controller::InFlight;
using convoy::controller::refill_window;
using convoy::controller::RequestBudget;
namespace proto = convoy::proto;

namespace {

LoadConfig concurrency_load(int64_t n) {
  LoadConfig load;
  load.mode = LoadMode::kConcurrency;
  load.concurrency = n;
  return load;
}

proto::Conversation budget_conversation(uint64_t index, size_t turns) {
  proto::Conversation c;
  c.index = index;
  c.correlation_id = "c" + std::to_string(index);
  c.phase = proto::Phase::kMeasure;
  c.turns.resize(turns);
  return c;
}

InFlight::Send discard() {
  return [](const std::string&, proto::Assign&) {};
}

}  // namespace

TEST_CASE("refill window: load.requests and warmup by count are windowed, stages are not") {
  LoadConfig load = concurrency_load(16);
  const size_t plain = refill_window(load, 2, proto::Phase::kMeasure);
  CHECK(plain == 16);  // two per slot a worker holds: 16 slots over 2 workers
  SUBCASE("load.requests: each window conversation commits its turns as it enters") {
    load.requests = 100;
    CHECK(refill_window(load, 2, proto::Phase::kMeasure) == plain);
  }
  SUBCASE("warmup by count ends only when its windows are empty") {
    load.warmup_sessions = 20;
    CHECK(refill_window(load, 2, proto::Phase::kWarmup) == plain);
    load.mode = LoadMode::kRate;  // warmup runs at the concurrency whatever the measure's mode
    CHECK(refill_window(load, 2, proto::Phase::kWarmup) == plain);
    CHECK(refill_window(load, 2, proto::Phase::kMeasure) == 0);
  }
  SUBCASE("warmup by time stops starting at a moment the workers do not know") {
    load.warmup_s = 5.0;
    CHECK(refill_window(load, 2, proto::Phase::kWarmup) == 0);
    CHECK(refill_window(load, 2, proto::Phase::kMeasure) == plain);
  }
  SUBCASE("stages keep the controller starting each conversation") {
    load.profile = ProfileKind::kStages;
    CHECK(refill_window(load, 2, proto::Phase::kMeasure) == 0);
  }
  SUBCASE("bounded by 8 and 64 per worker") {
    CHECK(refill_window(concurrency_load(1), 4, proto::Phase::kMeasure) == 8);
    CHECK(refill_window(concurrency_load(10000), 1, proto::Phase::kMeasure) == 64);
  }
}

TEST_CASE("in flight: a window conversation given back unstarted returns its granted turns") {
  InFlight book(1 << 20);
  RequestBudget budget(10);
  std::vector<proto::Conversation> window = {budget_conversation(1, 4), budget_conversation(2, 4),
                                             budget_conversation(3, 4)};
  for (auto& c : window) {
    book.apply_grant(c, budget);
    book.queue("w1", c, 0, discard(), /*window=*/true);
  }
  CHECK(window[2].turns.size() == 2);  // cut to what was left
  CHECK(budget.remaining() == 0);
  CHECK(book.returned("w1", 1, &budget) == InFlight::Returned::kWindow);
  CHECK(budget.remaining() == 4);
  // Started by the controller (its start crossed the return): the slot and the turns come back.
  CHECK(book.start_oldest_window(0, [](const std::string&) { return 0; }));
  CHECK(book.returned("w1", 2, &budget) == InFlight::Returned::kSlot);
  CHECK(budget.remaining() == 8);
  // Not w2's to give back.
  CHECK(book.returned("w2", 3, &budget) == InFlight::Returned::kNotHeld);
  CHECK(budget.remaining() == 8);
  // Started on its worker (a record came): a return of it is not believed, nothing comes back.
  proto::Record r;
  r.conversation_index = 3;
  r.phase = proto::Phase::kMeasure;
  CHECK(book.refilled("w1", 3));
  book.on_record(r);
  CHECK(book.returned("w1", 3, &budget) == InFlight::Returned::kNotHeld);
  CHECK(budget.remaining() == 8);
}

TEST_CASE("in flight: window conversations a lost worker keeps are lost apart, holding no slot") {
  InFlight book(1 << 20);
  RequestBudget budget(20);
  std::vector<proto::Conversation> cs = {budget_conversation(0, 2), budget_conversation(1, 2),
                                         budget_conversation(2, 2)};
  for (auto& c : cs) book.apply_grant(c, budget);
  book.queue("w1", cs[0], 0, discard());
  book.queue("w1", cs[1], 0, discard(), /*window=*/true);
  book.queue("w2", cs[2], 0, discard(), /*window=*/true);
  // load.requests: nothing of a lost worker goes out again (its window may have been started).
  auto taken = book.take_worker("w1", [](const InFlight::Entry&) { return false; });
  CHECK(taken.rehome.empty());
  CHECK(taken.lost == std::vector<uint64_t>{0});
  CHECK(taken.lost_window == std::vector<uint64_t>{1});
  CHECK(budget.remaining() == 14);  // both keep their commitment
  CHECK(book.windows() == 1);
  CHECK(book.window_of("w2") == 1);
}
