#include "worker/event_loop.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace convoy::worker {

namespace {

constexpr int64_t kNsPerSec = 1'000'000'000;
constexpr size_t kMaxEventsPerWait = 256;
// epoll data: the fd in the low half, the registration's generation in the high half, so that
// a stale event for a closed-and-reused fd number in the same batch is recognised and dropped.
constexpr uint64_t pack(int fd, uint32_t generation) {
  return (static_cast<uint64_t>(generation) << 32) | static_cast<uint32_t>(fd);
}

[[noreturn]] void throw_errno(const char* what) {
  throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

struct UniqueFd {
  int fd = -1;
  UniqueFd() = default;
  explicit UniqueFd(int value) : fd(value) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

struct EventLoop::Impl {
  struct FdEntry {
    uint32_t generation = 0;
    uint32_t events = 0;
    FdCallback cb;
  };
  struct HeapItem {
    int64_t deadline_ns;
    uint64_t seq;  // the order timers were added in
    TimerId id;
    // std::push_heap builds a max-heap: invert so the earliest deadline (then the lowest seq, so
    // equal deadlines fire in the order they were added) is on top.
    bool operator<(const HeapItem& other) const {
      return deadline_ns != other.deadline_ns ? deadline_ns > other.deadline_ns : seq > other.seq;
    }
  };
  // Timers live in reused slots (a timer per request and more: no allocation per timer). An id
  // is the slot in its low half and the slot's generation in its high half, so the id of a
  // fired or cancelled timer never names the slot's next timer.
  struct TimerSlot {
    uint32_t generation = 1;
    bool live = false;
    TimerCallback cb;
  };

  UniqueFd epoll_fd;
  UniqueFd wake_fd;   // eventfd: stop() from another thread or a signal handler
  UniqueFd timer_fd;  // only when epoll_pwait2 is unavailable (kernels before 5.11)
  bool use_pwait2 = true;
  std::atomic<bool> stopped{false};

  std::unordered_map<int, std::shared_ptr<FdEntry>> fds;
  uint32_t next_generation = 1;

  std::vector<HeapItem> heap;  // may hold cancelled ids (lazy)
  std::vector<TimerSlot> slots;
  std::vector<uint32_t> free_slots;
  size_t live_timers = 0;
  uint64_t next_seq = 1;

  static TimerId make_id(uint32_t slot, uint32_t generation) {
    return (static_cast<TimerId>(generation) << 32) | slot;
  }
  // The live slot `id` names; null for a fired, cancelled or unknown id.
  TimerSlot* live_slot(TimerId id) {
    const auto slot = static_cast<uint32_t>(id);
    if (slot >= slots.size()) return nullptr;
    TimerSlot& t = slots[slot];
    return t.live && t.generation == static_cast<uint32_t>(id >> 32) ? &t : nullptr;
  }
  void free_slot(TimerId id) {
    TimerSlot& t = slots[static_cast<uint32_t>(id)];
    t.live = false;
    t.cb = nullptr;
    if (++t.generation == 0) t.generation = 1;  // id 0 stays invalid
    free_slots.push_back(static_cast<uint32_t>(id));
    --live_timers;
  }

  std::array<epoll_event, kMaxEventsPerWait> events{};

  void ctl(int op, int fd, uint32_t ev, uint64_t data) {
    epoll_event e{};
    e.events = ev;
    e.data.u64 = data;
    if (epoll_ctl(epoll_fd.fd, op, fd, &e) == 0) return;
    // The kernel drops a closed fd from the set on its own; our table may still name it.
    if (op == EPOLL_CTL_MOD && errno == ENOENT) {
      if (epoll_ctl(epoll_fd.fd, EPOLL_CTL_ADD, fd, &e) == 0) return;
    } else if (op == EPOLL_CTL_ADD && errno == EEXIST) {
      if (epoll_ctl(epoll_fd.fd, EPOLL_CTL_MOD, fd, &e) == 0) return;
    }
    throw_errno("epoll_ctl");
  }

  // Drops cancelled timers off the top of the heap, and rebuilds the heap when most of it is
  // cancelled entries so that memory follows the live timer count.
  void prune_heap() {
    while (!heap.empty() && live_slot(heap.front().id) == nullptr) {
      std::pop_heap(heap.begin(), heap.end());
      heap.pop_back();
    }
    if (heap.size() > 64 && heap.size() > 4 * live_timers) {
      std::erase_if(heap, [&](const HeapItem& item) { return live_slot(item.id) == nullptr; });
      std::make_heap(heap.begin(), heap.end());
    }
  }

  int wait(int64_t timeout_ns) {
    const int max_events = static_cast<int>(events.size());
    if (use_pwait2) {
      timespec ts{};
      timespec* tsp = nullptr;
      if (timeout_ns >= 0) {
        ts.tv_sec = static_cast<time_t>(timeout_ns / kNsPerSec);
        ts.tv_nsec = static_cast<long>(timeout_ns % kNsPerSec);
        tsp = &ts;
      }
      const int n = epoll_pwait2(epoll_fd.fd, events.data(), max_events, tsp, nullptr);
      if (n >= 0 || errno != ENOSYS) return n;
      use_pwait2 = false;
      timer_fd.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
      if (timer_fd.fd < 0) throw_errno("timerfd_create");
      ctl(EPOLL_CTL_ADD, timer_fd.fd, EPOLLIN, pack(timer_fd.fd, 0));
    }
    // Fallback: a one-shot timerfd carries the sub-millisecond deadline.
    if (timeout_ns <= 0)
      return epoll_wait(epoll_fd.fd, events.data(), max_events, timeout_ns == 0 ? 0 : -1);
    itimerspec spec{};
    spec.it_value.tv_sec = static_cast<time_t>(timeout_ns / kNsPerSec);
    spec.it_value.tv_nsec = static_cast<long>(timeout_ns % kNsPerSec);
    timerfd_settime(timer_fd.fd, 0, &spec, nullptr);
    const int n = epoll_wait(epoll_fd.fd, events.data(), max_events, -1);
    const itimerspec disarm{};
    timerfd_settime(timer_fd.fd, 0, &disarm, nullptr);
    return n;
  }

  void drain(int fd) {
    uint64_t value = 0;
    while (::read(fd, &value, sizeof value) == static_cast<ssize_t>(sizeof value)) {
    }
  }

  void dispatch_fd(const epoll_event& ev) {
    const int fd = static_cast<int>(static_cast<uint32_t>(ev.data.u64));
    const auto generation = static_cast<uint32_t>(ev.data.u64 >> 32);
    if (generation == 0) {  // internal fds
      drain(fd);
      return;
    }
    auto it = fds.find(fd);
    if (it == fds.end() || it->second->generation != generation) return;
    // Hold the entry: the callback may remove or replace its own registration.
    std::shared_ptr<FdEntry> entry = it->second;
    entry->cb(ev.events);
  }

  void fire_due_timers() {
    const int64_t now = steady_now_ns();
    // Timers added by callbacks in this pass wait for the next iteration, so a callback that
    // re-arms itself at `now` cannot starve file descriptors.
    const uint64_t limit = next_seq;
    for (int fired = 0; fired < kMaxTimersPerIteration; ++fired) {
      prune_heap();
      if (heap.empty()) return;
      const HeapItem top = heap.front();
      if (top.deadline_ns > now || top.seq >= limit) return;
      std::pop_heap(heap.begin(), heap.end());
      heap.pop_back();
      TimerCallback cb = std::move(live_slot(top.id)->cb);
      free_slot(top.id);
      cb();
    }
    // kMaxTimersPerIteration fired: any still due run next iteration (epoll waits 0 for them).
  }
};

EventLoop::EventLoop() : impl_(std::make_unique<Impl>()) {
  impl_->epoll_fd.fd = epoll_create1(EPOLL_CLOEXEC);
  if (impl_->epoll_fd.fd < 0) throw_errno("epoll_create1");
  impl_->wake_fd.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->wake_fd.fd < 0) throw_errno("eventfd");
  impl_->ctl(EPOLL_CTL_ADD, impl_->wake_fd.fd, EPOLLIN, pack(impl_->wake_fd.fd, 0));
}

EventLoop::~EventLoop() = default;

void EventLoop::add_fd(int fd, uint32_t events, FdCallback cb) {
  auto entry = std::make_shared<Impl::FdEntry>();
  entry->generation = impl_->next_generation++;
  if (impl_->next_generation == 0) impl_->next_generation = 1;  // 0 marks internal fds
  entry->events = events;
  entry->cb = std::move(cb);
  auto it = impl_->fds.find(fd);
  const int op = it == impl_->fds.end() ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  impl_->ctl(op, fd, events, pack(fd, entry->generation));
  impl_->fds[fd] = std::move(entry);
}

void EventLoop::modify_fd(int fd, uint32_t events) {
  auto it = impl_->fds.find(fd);
  if (it == impl_->fds.end() || it->second->events == events) return;
  it->second->events = events;
  impl_->ctl(EPOLL_CTL_MOD, fd, events, pack(fd, it->second->generation));
}

void EventLoop::remove_fd(int fd) {
  auto it = impl_->fds.find(fd);
  if (it == impl_->fds.end()) return;
  impl_->fds.erase(it);
  epoll_event unused{};
  // ENOENT/EBADF: the fd was already closed, which removed it from the set.
  epoll_ctl(impl_->epoll_fd.fd, EPOLL_CTL_DEL, fd, &unused);
}

uint32_t EventLoop::fd_events(int fd) const {
  auto it = impl_->fds.find(fd);
  return it == impl_->fds.end() ? 0 : it->second->events;
}

EventLoop::TimerId EventLoop::add_timer(int64_t deadline_ns, TimerCallback cb) {
  Impl& s = *impl_;
  uint32_t slot = 0;
  if (s.free_slots.empty()) {
    slot = static_cast<uint32_t>(s.slots.size());
    s.slots.emplace_back();
  } else {
    slot = s.free_slots.back();
    s.free_slots.pop_back();
  }
  Impl::TimerSlot& t = s.slots[slot];
  t.live = true;
  t.cb = std::move(cb);
  ++s.live_timers;
  const TimerId id = Impl::make_id(slot, t.generation);
  s.heap.push_back({deadline_ns, s.next_seq++, id});
  std::push_heap(s.heap.begin(), s.heap.end());
  return id;
}

void EventLoop::cancel_timer(TimerId id) {
  if (impl_->live_slot(id) != nullptr) impl_->free_slot(id);
}

void EventLoop::run() {
  while (!stopped()) run_once(-1);
}

void EventLoop::run_once(int64_t max_wait_ns) {
  Impl& s = *impl_;
  s.prune_heap();
  int64_t timeout_ns = max_wait_ns;  // < 0: no limit
  if (!s.heap.empty()) {
    const int64_t until_timer_ns =
        std::max<int64_t>(0, s.heap.front().deadline_ns - steady_now_ns());
    timeout_ns = timeout_ns < 0 ? until_timer_ns : std::min(timeout_ns, until_timer_ns);
  }
  const int n = s.wait(timeout_ns);
  if (n < 0) {
    if (errno == EINTR) return;
    throw_errno("epoll_wait");
  }
  for (int i = 0; i < n; ++i) s.dispatch_fd(s.events[static_cast<size_t>(i)]);
  s.fire_due_timers();
}

void EventLoop::stop() {
  impl_->stopped.store(true);
  const uint64_t one = 1;
  // write() is async-signal-safe: stop() may be called from a signal handler or another thread.
  [[maybe_unused]] const ssize_t written = ::write(impl_->wake_fd.fd, &one, sizeof one);
}

void EventLoop::restart() { impl_->stopped.store(false); }

bool EventLoop::stopped() const { return impl_->stopped.load(std::memory_order_relaxed); }

size_t EventLoop::timer_count() const { return impl_->live_timers; }

}  // namespace convoy::worker
