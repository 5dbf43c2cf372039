#include "worker/event_loop.hpp"
#include "test_time.hpp"

#include <doctest/doctest.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <functional>
#include <thread>
#include <vector>

using convoy::worker::EventLoop;
using convoy::worker::steady_now_ns;

namespace {

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { REQUIRE(::pipe(fds) == 0); }
  ~Pipe() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  void write_byte() const {
    const char c = 'x';
    REQUIRE(::write(fds[1], &c, 1) == 1);
  }
};

// Runs the loop until `done()` or the deadline; bounded in iterations and time.
template <class Pred>
bool loop_run_until(EventLoop& loop, Pred done, int64_t budget_ns = 2000 * kMs) {
  const int64_t deadline = steady_now_ns() + budget_ns;
  for (int i = 0; i < 100000 && !done() && steady_now_ns() < deadline; ++i) {
    loop.run_once(10 * kMs);
  }
  return done();
}

}  // namespace

TEST_CASE("event loop: timers fire in deadline order") {
  EventLoop loop;
  std::vector<int> order;
  const int64_t now = steady_now_ns();
  loop.add_timer(now + 3 * kMs, [&] { order.push_back(3); });
  loop.add_timer(now + 1 * kMs, [&] { order.push_back(1); });
  loop.add_timer(now + 2 * kMs, [&] { order.push_back(2); });
  loop.add_timer(now + 2 * kMs, [&] { order.push_back(22); });  // ties: in the order added
  loop.add_timer(0, [&] { order.push_back(0); });               // past deadlines fire at once
  CHECK(loop.timer_count() == 5);
  REQUIRE(loop_run_until(loop, [&] { return order.size() == 5; }));
  CHECK(order == std::vector<int>{0, 1, 2, 22, 3});
  CHECK(loop.timer_count() == 0);

  SUBCASE("timers have sub-millisecond precision and never fire early") {
    // A loop that rounds waits to whole milliseconds fires a 300 us timer at least 700 us late
    // (or spins when it rounds down). The best of 20 tries tolerates a busy machine.
    int64_t best_late_ns = INT64_MAX;
    for (int i = 0; i < 20; ++i) {
      const int64_t deadline = steady_now_ns() + 300'000;
      int64_t fired_at = 0;
      loop.add_timer(deadline, [&] { fired_at = steady_now_ns(); });
      REQUIRE(loop_run_until(loop, [&] { return fired_at != 0; }));
      CHECK(fired_at >= deadline);
      best_late_ns = std::min(best_late_ns, fired_at - deadline);
    }
    CHECK(best_late_ns < 250'000);
  }
}

TEST_CASE("event loop: cancelled timers do not fire and ids are never reused") {
  EventLoop loop;
  int fired = 0;
  const int64_t now = steady_now_ns();
  const auto a = loop.add_timer(now + 1 * kMs, [&] { fired += 1; });
  const auto b = loop.add_timer(now + 1 * kMs, [&] { fired += 10; });
  CHECK(a != 0);
  CHECK(a != b);
  loop.cancel_timer(a);
  loop.cancel_timer(a);       // twice: a no-op
  loop.cancel_timer(999999);  // unknown: a no-op
  CHECK(loop.timer_count() == 1);
  REQUIRE(loop_run_until(loop, [&] { return fired != 0; }));
  CHECK(fired == 10);
  const auto c = loop.add_timer(now, [] {});
  CHECK(c > b);

  SUBCASE("a callback may cancel a later timer and add new ones") {
    int later = 0;
    int added = 0;
    const auto victim = loop.add_timer(steady_now_ns() + 2 * kMs, [&] { ++later; });
    loop.add_timer(0, [&] {
      loop.cancel_timer(victim);
      loop.add_timer(0, [&] { ++added; });
    });
    REQUIRE(loop_run_until(loop, [&] { return added == 1 && loop.timer_count() == 0; }));
    CHECK(later == 0);
  }
  SUBCASE("many cancellations do not keep memory or fire") {
    std::vector<EventLoop::TimerId> ids;
    for (int i = 0; i < 10000; ++i)
      ids.push_back(loop.add_timer(steady_now_ns(), [&] { ++fired; }));
    for (const auto id : ids) loop.cancel_timer(id);
    CHECK(loop.timer_count() <= 1);
    loop.run_once(0);
    CHECK(fired == 10);
  }
}

TEST_CASE("event loop: a burst of due timers yields to ready fds between iterations") {
  // Unbounded, a family's 100,000 sub-agents, a due timer each, kept the worker from its sockets
  // (and heartbeats) for seconds. At most kMaxTimersPerIteration fire per iteration.
  EventLoop loop;
  Pipe pipe;
  constexpr int kTimers = 10 * convoy::worker::kMaxTimersPerIteration;
  int fired = 0;
  int fired_when_read = -1;
  for (int i = 0; i < kTimers; ++i) loop.add_timer(0, [&] { ++fired; });
  loop.add_fd(pipe.fds[0], EPOLLIN, [&](uint32_t) {
    char c;
    if (::read(pipe.fds[0], &c, 1) == 1) fired_when_read = fired;
  });
  loop.run_once(0);
  CHECK(fired == convoy::worker::kMaxTimersPerIteration);
  pipe.write_byte();
  loop.run_once(0);
  CHECK(fired_when_read == convoy::worker::kMaxTimersPerIteration);  // before the next batch
  REQUIRE(loop_run_until(loop, [&] { return fired == kTimers; }));
  CHECK(loop.timer_count() == 0);
}

TEST_CASE("event loop: fd readiness") {
  EventLoop loop;
  Pipe pipe;
  int reads = 0;
  uint32_t seen = 0;
  loop.add_fd(pipe.fds[0], EPOLLIN, [&](uint32_t events) {
    seen = events;
    char buf[16];
    if (::read(pipe.fds[0], buf, sizeof buf) > 0) ++reads;
  });
  loop.run_once(0);
  CHECK(reads == 0);
  pipe.write_byte();
  REQUIRE(loop_run_until(loop, [&] { return reads == 1; }));
  CHECK((seen & EPOLLIN) != 0);

  SUBCASE("a removed fd is not dispatched") {
    loop.remove_fd(pipe.fds[0]);
    loop.remove_fd(pipe.fds[0]);  // unknown: a no-op
    pipe.write_byte();
    loop.run_once(5 * kMs);
    CHECK(reads == 1);
  }
  SUBCASE("add_fd on a registered fd replaces its callback") {
    int replaced = 0;
    loop.add_fd(pipe.fds[0], EPOLLIN, [&](uint32_t) {
      char buf[16];
      if (::read(pipe.fds[0], buf, sizeof buf) > 0) ++replaced;
    });
    pipe.write_byte();
    REQUIRE(loop_run_until(loop, [&] { return replaced == 1; }));
    CHECK(reads == 1);
  }
  SUBCASE("modify_fd changes the interest set") {
    int writable = 0;
    loop.add_fd(pipe.fds[1], 0, [&](uint32_t events) {
      if ((events & EPOLLOUT) != 0) ++writable;
      loop.modify_fd(pipe.fds[1], 0);
    });
    loop.run_once(0);
    CHECK(writable == 0);
    loop.modify_fd(pipe.fds[1], EPOLLOUT);
    REQUIRE(loop_run_until(loop, [&] { return writable == 1; }));
  }
  SUBCASE("a callback may remove its own fd") {
    loop.add_fd(pipe.fds[0], EPOLLIN, [&](uint32_t) {
      loop.remove_fd(pipe.fds[0]);
      ++reads;
    });
    pipe.write_byte();
    REQUIRE(loop_run_until(loop, [&] { return reads == 2; }));
    loop.run_once(2 * kMs);  // the byte is still unread, but nothing is registered
    CHECK(reads == 2);
  }
}

TEST_CASE("event loop: an idle loop blocks instead of spinning") {
  EventLoop loop;
  SUBCASE("run_once waits for its maximum when nothing is due") {
    const int64_t t0 = steady_now_ns();
    loop.run_once(50 * kMs);
    CHECK(steady_now_ns() - t0 >= 40 * kMs);
  }
  SUBCASE("run_once waits for the next timer, not longer") {
    bool fired = false;
    const int64_t t0 = steady_now_ns();
    loop.add_timer(t0 + 30 * kMs, [&] { fired = true; });
    int iterations = 0;
    while (!fired && iterations < 100) {
      loop.run_once(-1);
      ++iterations;
    }
    CHECK(fired);
    CHECK(iterations <= 2);  // one wait, maybe one early wake: no spinning
    CHECK(steady_now_ns() - t0 >= 30 * kMs);
  }
  SUBCASE("the process uses almost no CPU while waiting") {
    const std::clock_t cpu0 = std::clock();
    loop.run_once(100 * kMs);
    const double cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    CHECK(cpu_s < 0.02);
  }
}

TEST_CASE("event loop: stop") {
  EventLoop loop;
  SUBCASE("from a callback ends run()") {
    int ticks = 0;
    std::function<void()> tick = [&] {
      if (++ticks == 3) {
        loop.stop();
      } else {
        loop.add_timer(steady_now_ns() + kMs, tick);
      }
    };
    loop.add_timer(0, tick);
    loop.run();
    CHECK(ticks == 3);
    CHECK(loop.stopped());
    loop.restart();
    CHECK_FALSE(loop.stopped());
  }
  SUBCASE("from another thread wakes a blocked run()") {
    std::thread stopper([&] { loop.stop(); });
    const int64_t t0 = steady_now_ns();
    loop.run();  // blocks with nothing registered until the eventfd wakes it
    stopper.join();
    CHECK(loop.stopped());
    CHECK(steady_now_ns() - t0 < 5000 * kMs);
  }
}
