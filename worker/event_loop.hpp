// One single-threaded event loop per worker process: epoll for file descriptors plus a timer
// heap for deadlines on the steady clock. Everything in the worker is a reaction to one of them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "common/clock.hpp"  // steady_now_ns(): the clock of every deadline and timestamp

namespace convoy::worker {

// Due timers fired per iteration, at most: the rest wait for the next one, after the ready file
// descriptors. Bounded work per tick: a family whose 100,000 sub-agents all start at one turn's
// end (a timer each) must not keep the worker from its sockets: silent for seconds, it would be
// declared lost.
inline constexpr int kMaxTimersPerIteration = 256;

class EventLoop {
 public:
  using FdCallback = std::function<void(uint32_t epoll_events)>;
  using TimerCallback = std::function<void()>;
  using TimerId = uint64_t;  // 0 is never a valid id

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // `events` are EPOLLIN / EPOLLOUT bits. add_fd on a registered fd replaces it.
  void add_fd(int fd, uint32_t events, FdCallback cb);
  void modify_fd(int fd, uint32_t events);
  void remove_fd(int fd);            // a no-op for unknown fds
  uint32_t fd_events(int fd) const;  // the registered events; 0 for unknown fds

  // Runs `cb` once at or after `deadline_ns` (steady_now_ns() timeline).
  TimerId add_timer(int64_t deadline_ns, TimerCallback cb);
  void cancel_timer(TimerId id);  // a no-op for fired or unknown ids

  // Runs until stop(). Callbacks may add/remove fds and timers, and call stop().
  void run();
  // One iteration: waits at most `max_wait_ns` (< 0: no limit) or until the next timer, then
  // dispatches ready fds and due timers (at most kMaxTimersPerIteration of them). Works whether or
  // not stop() was called (use it to drain after a stop).
  void run_once(int64_t max_wait_ns);
  // Makes run() return after the current iteration. Async-signal-safe and thread-safe: it
  // wakes a blocked wait through an eventfd.
  void stop();
  bool stopped() const;
  // Clears a previous stop() so that run() can be called again.
  void restart();

  size_t timer_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::worker
