// The load shapes' pure parts: the users schedule (each user's next conversation its gap after
// the last ended, the first ones staggered 1/rate apart), the warmup's own level, and how
// load.prefill_concurrency is split across the workers.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "controller/run/assigner.hpp"
#include "controller/run/schedule.hpp"
#include "test_time.hpp"

using convoy::LoadConfig;
using convoy::LoadMode;
using convoy::WarmupConfig;
using convoy::controller::prefill_share;
using convoy::controller::refill_window;
using convoy::controller::Scheduler;
using convoy::controller::warmup_level;
namespace proto = convoy::proto;

namespace {

constexpr int64_t kUsersStart = 500 * kS;  // an arbitrary steady-clock origin

LoadConfig users_load(int64_t users, double rate) {
  LoadConfig load;
  load.mode = LoadMode::kUsers;
  load.concurrency = users;
  load.rate = rate;
  return load;
}

}  // namespace

TEST_CASE("users: the first users start 1/rate apart, each next one its gap after an end") {
  const LoadConfig load = users_load(3, 2);  // gap 1.5 s, stagger 0.5 s
  CHECK(convoy::user_gap_ns(load) == 1500 * kMs);
  Scheduler s(load, LoadMode::kUsers, 7, std::nullopt, kUsersStart);
  // Only what is due within the lookahead goes out.
  auto due = s.due(kUsersStart, 100 * kMs);
  REQUIRE(due.size() == 1);
  CHECK(due[0].intended_ns == kUsersStart);
  REQUIRE(s.next_intended_ns().has_value());
  CHECK(*s.next_intended_ns() == kUsersStart + 500 * kMs);  // the loop wakes for the next user
  due = s.due(kUsersStart + 2 * kS, 0);
  REQUIRE(due.size() == 2);
  CHECK(due[0].intended_ns == kUsersStart + 500 * kMs);
  CHECK(due[1].intended_ns == kUsersStart + 1000 * kMs);
  CHECK(s.in_flight() == 3);
  CHECK(s.due(kUsersStart + 10 * kS, 0).empty());  // every user busy: nothing more
  // A user's conversation ends at t: its next one is intended at t + gap, not before.
  const int64_t end = kUsersStart + 3 * kS;
  s.on_end(end);
  CHECK(*s.next_intended_ns() == end + 1500 * kMs);
  CHECK(s.due(end + 1 * kS, 100 * kMs).empty());
  due = s.due(end + 1500 * kMs, 0);
  REQUIRE(due.size() == 1);
  CHECK(due[0].intended_ns == end + 1500 * kMs);
  CHECK(due[0].seq == 3);
}

TEST_CASE("users: a window conversation starts in a slot only when its user is due") {
  Scheduler s(users_load(1, 1), LoadMode::kUsers, 7, std::nullopt, kUsersStart);
  REQUIRE(s.take_ahead().has_value());  // users hold slots: windows apply
  auto first = s.take_free_slot(kUsersStart);
  REQUIRE(first.has_value());
  CHECK(*first == kUsersStart);
  s.on_end(kUsersStart + 2 * kS);  // gap 1 s
  CHECK_FALSE(s.take_free_slot(kUsersStart + 2 * kS).has_value());
  auto next = s.take_free_slot(kUsersStart + 2950 * kMs);  // within the lookahead
  REQUIRE(next.has_value());
  CHECK(*next == kUsersStart + 3 * kS);
}

TEST_CASE("load.warmup: its own level, windowed only when counted at a concurrency") {
  LoadConfig load;
  load.mode = LoadMode::kRate;
  load.concurrency = 16;
  load.rate = 50;
  CHECK(warmup_level(load).mode == LoadMode::kConcurrency);  // the measure's concurrency
  CHECK(warmup_level(load).concurrency == 16);
  load.warmup = WarmupConfig{};
  load.warmup->concurrency = 3;
  load.warmup_sessions = 10;
  CHECK(warmup_level(load).concurrency == 3);
  CHECK(warmup_level(load).mode == LoadMode::kConcurrency);
  CHECK(refill_window(load, 1, proto::Phase::kWarmup) == 8);  // 2 x 3 slots, at least 8
  load.warmup->concurrency.reset();
  load.warmup->rate = 2.5;
  CHECK(warmup_level(load).mode == LoadMode::kRate);
  CHECK(warmup_level(load).rate == 2.5);
  CHECK(refill_window(load, 1, proto::Phase::kWarmup) == 0);  // a rate has no slots
  // A warmup at concurrency 3 never has more than 3 conversations in flight.
  load.warmup->rate.reset();
  load.warmup->concurrency = 3;
  const LoadConfig warm = warmup_level(load);
  Scheduler s(warm, warm.mode, 1, 10, kUsersStart);
  CHECK(s.due(kUsersStart, 0).size() == 3);
  CHECK(s.due(kUsersStart + kS, 0).empty());
}

TEST_CASE("load.prefill_concurrency is split across the workers, the larger shares first") {
  CHECK(prefill_share(10, 3, 0) == 4);
  CHECK(prefill_share(10, 3, 1) == 3);
  CHECK(prefill_share(10, 3, 2) == 3);
  CHECK(prefill_share(10, 3, 3) == 4);  // a replacement takes the next share in turn
  int64_t sum = 0;
  for (uint64_t i = 0; i < 7; ++i) sum += prefill_share(23, 7, i);
  CHECK(sum == 23);
  CHECK(prefill_share(2, 2, 1) == 1);
}
