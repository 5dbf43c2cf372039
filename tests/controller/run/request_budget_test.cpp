// load.requests: exactly this many measured requests are sent (AIPerf's --request-count).
#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "controller/run/schedule.hpp"
#include "test_time.hpp"

namespace {

using convoy::LoadConfig;
using convoy::LoadMode;
using convoy::controller::Dispatch;
using convoy::controller::RequestBudget;
using convoy::controller::Scheduler;

constexpr int64_t kBudgetStart = 1'000'000 * kMs;

struct SimResult {
  int64_t sent = 0;
  int64_t conversations = 0;
  int64_t cut = 0;  // conversations granted fewer turns than planned
};

// The run loop's use of the budget (controller/run.cpp, schedule/assign/on_records/on_end): take
// one conversation at a time while requests remain, commit its planned turns (cut to fit), send
// one request of a random active conversation per step, and give back what a conversation that
// ends early did not send. `abort_per_mille`: chance that a request ends its conversation.
SimResult simulate(int64_t requests, int64_t concurrency, uint64_t seed, int abort_per_mille) {
  LoadConfig load;
  load.mode = LoadMode::kConcurrency;
  load.concurrency = concurrency;
  Scheduler scheduler(load, LoadMode::kConcurrency, seed, std::nullopt, kBudgetStart);
  RequestBudget budget(requests);
  std::mt19937_64 rng(seed);
  struct Active {
    int64_t granted = 0;
    int64_t sent = 0;
  };
  std::map<uint64_t, Active> active;
  SimResult out;
  int64_t now = kBudgetStart;
  for (int step = 0; step < 100'000; ++step) {
    while (budget.remaining() > 0) {
      const auto due = scheduler.due(now, 0, 1);
      if (due.empty()) break;
      const int64_t planned = 1 + static_cast<int64_t>(rng() % 6);
      const int64_t granted = budget.commit(planned);
      REQUIRE(granted > 0);
      if (granted < planned) ++out.cut;
      active[due[0].seq] = {granted, 0};
      ++out.conversations;
    }
    if (active.empty()) break;
    auto it = active.begin();
    std::advance(it, static_cast<long>(rng() % active.size()));
    ++it->second.sent;
    ++out.sent;
    now += kMs;
    const bool aborted = static_cast<int>(rng() % 1000) < abort_per_mille;
    if (aborted || it->second.sent == it->second.granted) {
      budget.release(it->second.granted, it->second.sent);
      active.erase(it);
      scheduler.on_end(now);
    }
  }
  CHECK(budget.used());
  CHECK(budget.committed() == requests);
  return out;
}

}  // namespace

TEST_CASE("request budget: commit grants what remains and release gives back what was not sent") {
  RequestBudget budget(10);
  CHECK(budget.limited());
  CHECK(budget.commit(4) == 4);
  CHECK(budget.commit(4) == 4);
  CHECK(budget.remaining() == 2);
  CHECK(budget.commit(4) == 2);  // the last conversation is cut to fit
  CHECK(budget.used());
  CHECK(budget.commit(3) == 0);
  // The second conversation aborted after 1 of its 4: 3 come back.
  budget.release(4, 1);
  CHECK(budget.remaining() == 3);
  CHECK_FALSE(budget.used());
  CHECK(budget.commit(5) == 3);
  CHECK(budget.used());
  // A conversation that sent all it was granted gives nothing back.
  budget.release(3, 3);
  CHECK(budget.used());
  CHECK(budget.committed() == 10);
  // Nonsense never goes negative.
  budget.release(2, 5);
  CHECK(budget.committed() == 10);
  CHECK(budget.commit(-3) == 0);

  SUBCASE("unlimited grants everything") {
    RequestBudget unlimited;
    CHECK_FALSE(unlimited.limited());
    CHECK(unlimited.commit(1'000) == 1'000);
    CHECK_FALSE(unlimited.used());
    unlimited.release(1'000, 0);
    CHECK(unlimited.committed() == 0);
  }
}

TEST_CASE("request budget: exactly the requested number is sent whatever ends early") {
  int64_t cut = 0;
  for (int64_t requests : {1, 10, 11, 97}) {
    for (int64_t concurrency : {1, 3, 16, 200}) {  // 200: more slots than requests
      for (uint64_t seed = 1; seed <= 5; ++seed) {
        for (int abort_per_mille : {0, 150, 1000}) {  // 1000: every request fails
          CAPTURE(requests);
          CAPTURE(concurrency);
          CAPTURE(seed);
          CAPTURE(abort_per_mille);
          const SimResult r = simulate(requests, concurrency, seed, abort_per_mille);
          CHECK(r.sent == requests);
          if (abort_per_mille == 1000) CHECK(r.conversations == requests);
          cut += r.cut;
        }
      }
    }
  }
  CHECK(cut > 0);  // the sweep did cut conversations to fit
}

TEST_CASE("scheduler hands out at most max conversations per call") {
  LoadConfig load;
  load.mode = LoadMode::kConcurrency;
  load.concurrency = 8;
  Scheduler scheduler(load, LoadMode::kConcurrency, 1, std::nullopt, kBudgetStart);
  const std::vector<Dispatch> one = scheduler.due(kBudgetStart, 0, 1);
  REQUIRE(one.size() == 1);
  CHECK(one[0].seq == 0);
  CHECK(scheduler.due(kBudgetStart, 0, 3).size() == 3);
  CHECK(scheduler.due(kBudgetStart, 0).size() == 4);  // the rest of the 8 slots
  CHECK(scheduler.in_flight() == 8);
}
