// Concurrency refill, the controller's half: the Scheduler's conversations taken
// ahead of a slot, and InFlight's windows (window batches, refills, starts, returns, loss).
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/run/in_flight.hpp"
#include "controller/run/schedule.hpp"
#include "test_time.hpp"

using convoy::LoadConfig;
using convoy::LoadMode;
using convoy::controller::InFlight;
using convoy::controller::RequestBudget;
using convoy::controller::Scheduler;
namespace proto = convoy::proto;

namespace {

constexpr int64_t kWindowStart = 1'000'000 * kMs;

LoadConfig window_load(int64_t n) {
  LoadConfig load;
  load.mode = LoadMode::kConcurrency;
  load.concurrency = n;
  return load;
}

proto::Conversation window_conversation(uint64_t index) {
  proto::Conversation c;
  c.index = index;
  c.correlation_id = "c" + std::to_string(index);
  c.turns.emplace_back();
  return c;
}

// Keeps every Assign that went out, by worker.
struct WindowSent {
  std::vector<std::pair<std::string, proto::Assign>> batches;
  InFlight::Send send() {
    return [this](const std::string& worker, proto::Assign& msg) {
      batches.emplace_back(worker, msg);
    };
  }
};

int64_t no_offset(const std::string&) { return 0; }

}  // namespace

TEST_CASE("scheduler: conversations taken ahead hold no slot until a free one is taken") {
  Scheduler s(window_load(2), LoadMode::kConcurrency, 1, 6, kWindowStart);
  CHECK(s.due(kWindowStart, 0).size() == 2);  // seqs 0, 1 fill both slots
  CHECK(s.take_ahead() == 2u);
  CHECK(s.take_ahead() == 3u);
  CHECK(s.in_flight() == 2);  // taken ahead: no slot
  CHECK_FALSE(s.take_free_slot(kWindowStart).has_value());
  // A refill keeps the slot (no on_end); an end that comes back frees one for a window.
  s.on_end(kWindowStart + 5 * kMs);
  CHECK(s.take_free_slot(kWindowStart + 6 * kMs) == kWindowStart + 5 * kMs);
  CHECK(s.in_flight() == 2);
  CHECK(s.due(kWindowStart + 6 * kMs, 0).empty());
  SUBCASE("a given-back conversation goes out again before new ones") {
    s.give_back(3);
    CHECK(s.take_ahead() == 3u);
    CHECK(s.take_ahead() == 4u);
    CHECK(s.take_ahead() == 5u);
    CHECK(s.exhausted());
    s.give_back(5);
    CHECK_FALSE(s.exhausted());
    s.on_end(kWindowStart + 7 * kMs);
    const auto due = s.due(kWindowStart + 7 * kMs, 0);
    REQUIRE(due.size() == 1);
    CHECK(due[0].seq == 5u);
    CHECK(s.exhausted());
  }
  SUBCASE("nothing is taken ahead in mode rate, or while paused") {
    Scheduler rate(window_load(2), LoadMode::kRate, 1, 6, kWindowStart);
    CHECK_FALSE(rate.take_ahead().has_value());
    s.pause();
    CHECK_FALSE(s.take_ahead().has_value());
    CHECK_FALSE(s.take_free_slot(kWindowStart + 7 * kMs).has_value());
  }
}

TEST_CASE("in flight: window conversations travel in window batches and hold no slot") {
  WindowSent sent;
  InFlight book(1 << 20);
  RequestBudget budget;
  book.queue("w1", window_conversation(0), kWindowStart, sent.send());
  book.queue("w1", window_conversation(1), 0, sent.send(), /*window=*/true);
  book.queue("w1", window_conversation(2), 0, sent.send(), /*window=*/true);
  book.flush(sent.send());
  REQUIRE(sent.batches.size() == 2);
  CHECK_FALSE(sent.batches[0].second.window);  // direct before window
  CHECK(sent.batches[0].second.conversations.size() == 1);
  CHECK(sent.batches[1].second.window);
  CHECK(sent.batches[1].second.conversations.size() == 2);
  CHECK(book.size() == 3);
  CHECK(book.windows() == 2);
  CHECK(book.running() == 1);
  CHECK(book.window_of("w1") == 2);

  // The worker refilled 0's slot with 1: 1 now runs, the slot never came back.
  CHECK(book.end("w1", 0, budget));
  CHECK(book.refilled("w1", 1));
  CHECK_FALSE(book.refilled("w1", 1));  // once
  CHECK_FALSE(book.refilled("w2", 2));  // not w2's
  CHECK(book.running() == 1);
  CHECK(book.windows() == 1);

  // A slot that came back starts the oldest window conversation by a start in a window batch.
  CHECK(book.start_oldest_window(kWindowStart + kMs, [](const std::string&) { return 7; }));
  CHECK_FALSE(book.start_oldest_window(kWindowStart, no_offset));  // none left
  book.flush(sent.send());
  REQUIRE(sent.batches.size() == 3);
  CHECK(sent.batches[2].second.conversations.empty());
  REQUIRE(sent.batches[2].second.start.size() == 1);
  CHECK(sent.batches[2].second.start[0].conversation_index == 2u);
  CHECK(sent.batches[2].second.start[0].start_ns == kWindowStart + kMs + 7);
  // The worker had refilled with it already (the start crossed the refill): not a window one.
  CHECK_FALSE(book.refilled("w1", 2));
  CHECK(book.running() == 2);
}

TEST_CASE("in flight: a returned window conversation frees a slot only when it had been started") {
  WindowSent sent;
  InFlight book(1 << 20);
  RequestBudget budget;
  book.queue("w1", window_conversation(1), 0, sent.send(), true);
  book.queue("w1", window_conversation(2), 0, sent.send(), true);
  book.queue("w1", window_conversation(3), 0, sent.send(), true);
  CHECK(book.start_oldest_window(kWindowStart, no_offset));  // 1: its start crosses the return
  CHECK(book.returned("w1", 1) == InFlight::Returned::kSlot);
  CHECK(book.returned("w1", 2) == InFlight::Returned::kWindow);
  CHECK(book.returned("w1", 2) == InFlight::Returned::kNotHeld);
  CHECK(book.returned("w2", 3) == InFlight::Returned::kNotHeld);
  proto::Record r;
  r.conversation_index = 3;
  CHECK(book.refilled("w1", 3));
  book.on_record(r);  // started: a return of it is not believed
  CHECK(book.returned("w1", 3) == InFlight::Returned::kNotHeld);
  CHECK(book.size() == 1);
  CHECK(book.windows() == 0);
}

TEST_CASE("in flight: a lost worker's window comes out marked, for its conversations to go again") {
  WindowSent sent;
  InFlight book(1 << 20);
  book.queue("w1", window_conversation(0), kWindowStart, sent.send());
  book.queue("w1", window_conversation(1), 0, sent.send(), true);
  book.queue("w2", window_conversation(2), 0, sent.send(), true);
  auto taken = book.take_worker("w1", [](const InFlight::Entry& e) { return e.window; });
  REQUIRE(taken.rehome.size() == 1);
  CHECK(taken.rehome[0].first == 1u);
  CHECK(taken.rehome[0].second.window);
  CHECK(taken.lost == std::vector<uint64_t>{0});
  CHECK(book.windows() == 1);
  CHECK(book.window_of("w2") == 1);
}
