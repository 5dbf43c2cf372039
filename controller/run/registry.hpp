// The controller's view of its workers: an explicit state machine per worker, liveness by
// heartbeats (Paranoid Pirate: lost after Liveness::missed_heartbeats silent periods) and an
// NTP-style clock offset from the minimum-round-trip ping, re-checked on a per-worker deadline.
// Pure: every call takes `now_ns`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/report/run_facts.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

enum class WorkerState { kConnecting, kReady, kRunning, kStopping, kLost, kDone };
const char* to_string(WorkerState s);

inline constexpr int64_t kHeartbeatPeriodNs = 1'000'000'000;  // Liveness's defaults
inline constexpr int kMissedHeartbeats = 3;
inline constexpr int64_t kClockRecheckNs = 5'000'000'000;
inline constexpr int kClockPings = 5;  // offset samples taken at registration
// Peers that may be in their handshake at once beyond workers.expect: bounds the registry
// against a flood of ids while a few squatters can never crowd real workers out.
inline constexpr size_t kSpareHandshakes = 64;

// Why a hello was refused; `retry` when the worker may try again (no free slot now).
struct Refusal {
  std::string reason;
  bool retry = false;
};

// How the controller judges its workers alive. Users get the defaults; tests shrink them.
struct Liveness {
  int64_t heartbeat_period_ns = kHeartbeatPeriodNs;  // a heartbeat to each worker this often
  int missed_heartbeats = kMissedHeartbeats;         // silent periods before a worker is lost
  int64_t clock_recheck_ns = kClockRecheckNs;        // a ping per live worker this often
  int64_t lost_after_ns() const { return missed_heartbeats * heartbeat_period_ns; }
};

struct ClockSample {
  int64_t rtt_ns = 0;
  int64_t offset_ns = 0;  // worker clock - controller clock
};

// One ping exchange, NTP-style: t0 controller send, t1 worker receive, t2 worker send,
// t3 controller receive.
ClockSample clock_sample(int64_t t0, int64_t t1, int64_t t2, int64_t t3);

struct WorkerInfo {
  std::string id;
  std::string host;
  int64_t pid = 0;
  WorkerState state = WorkerState::kConnecting;
  int64_t last_seen_ns = 0;  // its latest message (a repeated hello while connecting excepted)
  int64_t joined_ns = 0;     // its first hello; a handshake not done lost_after_ns() later ends
  int64_t next_clock_check_ns = 0;   // its next offset re-check ping (Liveness::clock_recheck_ns)
  std::vector<ClockSample> samples;  // the latest few; the min-RTT one is the estimate
  std::optional<ClockSample> best;   // min-RTT sample
  proto::Heartbeat last_heartbeat;
  double max_cpu_percent = 0;
  int64_t max_rss_bytes = 0;
  int64_t records = 0;
  int64_t conversations_assigned = 0;
  std::string token;          // the results secret sent in its Welcome ("" until then)
  uint64_t batches_sent = 0;  // Assign batches numbered so far (Assign::batch)

  int64_t offset_ns() const { return best ? best->offset_ns : 0; }
  // Clock samples all taken (a connecting worker in this state found no free slot).
  bool handshake_done() const { return samples.size() >= kClockPings; }
};

class WorkerRegistry {
 public:
  explicit WorkerRegistry(const Liveness& liveness = {}) : liveness_(liveness) {}
  const Liveness& liveness() const { return liveness_; }

  // A Hello. Returns a refusal (and registers nothing) on a protocol mismatch, an id or host
  // that is not printable UTF-8 (or too long), when `max_live` workers already hold a slot, or
  // when kSpareHandshakes peers beyond that are already connecting. A connecting peer holds no
  // slot: a slot is taken only when its clock check is done (on_pong), so peers that only say
  // hello can never keep real workers out (workers.expect).
  std::optional<Refusal> on_hello(const proto::Hello& hello, int64_t now_ns,
                                  size_t max_live = SIZE_MAX);
  // Any message from a known worker keeps it alive.
  void on_seen(const std::string& id, int64_t now_ns);
  void on_heartbeat(const std::string& id, const proto::Heartbeat& hb, int64_t now_ns);
  // A pong; after kClockPings samples a connecting worker becomes ready (its first re-check is
  // due clock_recheck_ns later) if fewer than `max_live` workers are live; otherwise it stays
  // connecting with its samples taken (handshake_done: the caller refuses and forgets it).
  // Returns true when this pong made it ready.
  bool on_pong(const std::string& id, const proto::Pong& pong, int64_t now_ns,
               size_t max_live = SIZE_MAX);
  // Removes a worker that never held a slot (a refused handshake).
  void forget(const std::string& id);
  void set_state(const std::string& id, WorkerState state);

  // Workers silent for longer than lost_after_ns() become lost; returns them. One still
  // connecting lost_after_ns() after its first hello is forgotten instead, however often it
  // repeated its hello: it never answered the clock check, never ran anything, held no slot.
  std::vector<std::string> expire(int64_t now_ns);

  // Live workers whose clock re-check is due by `now_ns`; each one's next is clock_recheck_ns
  // after this one, so every worker is re-checked on its own schedule, however ticks fall.
  std::vector<std::string> due_clock_checks(int64_t now_ns);

  WorkerInfo* find(const std::string& id);
  const WorkerInfo* find(const std::string& id) const;
  size_t count(WorkerState state) const;
  size_t live_count() const;    // ready, running or stopping
  size_t active_count() const;  // connecting, ready, running or stopping
  const std::map<std::string, WorkerInfo>& workers() const { return workers_; }

 private:
  Liveness liveness_;
  std::map<std::string, WorkerInfo> workers_;
};

// Every worker as the report describes it.
std::vector<WorkerSummary> worker_summaries(const WorkerRegistry& registry);

}  // namespace convoy::controller
