#include "controller/run/registry.hpp"

#include <algorithm>

#include "common/log.hpp"
#include "common/utf8.hpp"

namespace convoy::controller {

const char* to_string(WorkerState s) {
  switch (s) {
    case WorkerState::kConnecting:
      return "connecting";
    case WorkerState::kReady:
      return "ready";
    case WorkerState::kRunning:
      return "running";
    case WorkerState::kStopping:
      return "stopping";
    case WorkerState::kLost:
      return "lost";
    case WorkerState::kDone:
      return "done";
  }
  return "?";
}

ClockSample clock_sample(int64_t t0, int64_t t1, int64_t t2, int64_t t3) {
  ClockSample s;
  s.rtt_ns = (t3 - t0) - (t2 - t1);
  s.offset_ns = ((t1 - t0) + (t2 - t3)) / 2;
  return s;
}

namespace {

constexpr size_t kMaxIdBytes = 128;
constexpr size_t kMaxHostBytes = 255;

// Why `text` cannot name a worker or host in logs and outputs, or nullopt when it can.
std::optional<std::string> bad_name(std::string_view text, size_t max_bytes) {
  if (text.empty()) return "is empty";
  if (text.size() > max_bytes) return "is longer than " + std::to_string(max_bytes) + " bytes";
  if (!is_valid_utf8(text)) return "is not valid UTF-8";
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return "holds a control character";
  }
  return std::nullopt;
}

}  // namespace

std::optional<Refusal> WorkerRegistry::on_hello(const proto::Hello& hello, int64_t now_ns,
                                                size_t max_live) {
  if (auto why = bad_name(hello.worker_id, kMaxIdBytes)) {
    return Refusal{"worker id \"" + log_escape(hello.worker_id, 64) + "\" " + *why};
  }
  if (auto why = bad_name(hello.host, kMaxHostBytes)) {
    return Refusal{"worker " + hello.worker_id + ": host \"" + log_escape(hello.host, 64) + "\" " +
                   *why};
  }
  if (hello.protocol_version != proto::kProtocolVersion) {
    return Refusal{"protocol version mismatch: worker " + hello.worker_id + " speaks version " +
                   std::to_string(hello.protocol_version) + ", this controller speaks version " +
                   std::to_string(proto::kProtocolVersion) +
                   "; run the same convoy release on both"};
  }
  auto known = workers_.find(hello.worker_id);
  if (known != workers_.end() && known->second.state != WorkerState::kLost &&
      known->second.state != WorkerState::kDone) {
    // A repeated hello (the worker retries until welcomed): keep the state. It keeps a live
    // worker alive, never a connecting one: that one must answer the clock check in time.
    if (known->second.state != WorkerState::kConnecting) known->second.last_seen_ns = now_ns;
    return std::nullopt;
  }
  if (live_count() >= max_live) {
    return Refusal{"worker " + hello.worker_id + " refused for now: the run already has " +
                       std::to_string(live_count()) + " worker(s), as many as workers.expect",
                   true};
  }
  const size_t spare = max_live == SIZE_MAX ? SIZE_MAX : max_live + kSpareHandshakes;
  if (count(WorkerState::kConnecting) >= spare) {
    return Refusal{"worker " + hello.worker_id +
                       " refused for now: " + std::to_string(count(WorkerState::kConnecting)) +
                       " peers are already registering",
                   true};
  }
  WorkerInfo& w = workers_[hello.worker_id];
  w = WorkerInfo{};
  w.id = hello.worker_id;
  w.host = hello.host;
  w.pid = hello.pid;
  w.state = WorkerState::kConnecting;
  w.last_seen_ns = now_ns;
  w.joined_ns = now_ns;
  return std::nullopt;
}

void WorkerRegistry::on_seen(const std::string& id, int64_t now_ns) {
  if (auto* w = find(id)) w->last_seen_ns = std::max(w->last_seen_ns, now_ns);
}

void WorkerRegistry::on_heartbeat(const std::string& id, const proto::Heartbeat& hb,
                                  int64_t now_ns) {
  WorkerInfo* w = find(id);
  if (!w) return;
  on_seen(id, now_ns);
  w->max_cpu_percent = std::max(w->max_cpu_percent, hb.cpu_percent);
  w->max_rss_bytes = std::max(w->max_rss_bytes, hb.rss_bytes);
  // The bye travels on the results socket, heartbeats on the control socket: a heartbeat sent
  // before the bye can be read after it, and the bye's counts are the worker's last word.
  if (w->state == WorkerState::kDone) return;
  w->last_heartbeat = hb;
}

bool WorkerRegistry::on_pong(const std::string& id, const proto::Pong& pong, int64_t now_ns,
                             size_t max_live) {
  WorkerInfo* w = find(id);
  if (!w) return false;
  on_seen(id, now_ns);
  ClockSample s =
      clock_sample(pong.controller_send_ns, pong.worker_recv_ns, pong.worker_send_ns, now_ns);
  if (s.rtt_ns < 0) return false;  // impossible: a reordered or forged pong
  w->samples.push_back(s);
  if (w->samples.size() > size_t{2} * kClockPings) w->samples.erase(w->samples.begin());
  // The minimum round trip has the least queueing noise, so its offset is the best estimate.
  w->best = *std::min_element(
      w->samples.begin(), w->samples.end(),
      [](const ClockSample& a, const ClockSample& b) { return a.rtt_ns < b.rtt_ns; });
  if (w->state == WorkerState::kConnecting && w->handshake_done() && live_count() < max_live) {
    w->state = WorkerState::kReady;
    w->next_clock_check_ns = now_ns + liveness_.clock_recheck_ns;
    return true;
  }
  return false;
}

void WorkerRegistry::forget(const std::string& id) {
  auto it = workers_.find(id);
  if (it != workers_.end() && it->second.state == WorkerState::kConnecting) workers_.erase(it);
}

void WorkerRegistry::set_state(const std::string& id, WorkerState state) {
  if (auto* w = find(id)) w->state = state;
}

std::vector<std::string> WorkerRegistry::expire(int64_t now_ns) {
  std::vector<std::string> lost;
  for (auto it = workers_.begin(); it != workers_.end();) {
    WorkerInfo& w = it->second;
    if (w.state == WorkerState::kConnecting) {
      // Whatever it repeats: its handshake must be done within lost_after_ns() of its hello.
      if (now_ns - w.joined_ns > liveness_.lost_after_ns()) {
        it = workers_.erase(it);
      } else {
        ++it;
      }
      continue;
    }
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone ||
        now_ns - w.last_seen_ns <= liveness_.lost_after_ns()) {
      ++it;
      continue;
    }
    w.state = WorkerState::kLost;
    lost.push_back(it->first);
    ++it;
  }
  return lost;
}

std::vector<std::string> WorkerRegistry::due_clock_checks(int64_t now_ns) {
  std::vector<std::string> due;
  for (auto& [id, w] : workers_) {
    const bool live = w.state == WorkerState::kReady || w.state == WorkerState::kRunning ||
                      w.state == WorkerState::kStopping;
    if (!live || now_ns < w.next_clock_check_ns) continue;
    due.push_back(id);
    // From now, not from the missed deadline: a stalled loop does not fire a burst of pings.
    w.next_clock_check_ns = now_ns + liveness_.clock_recheck_ns;
  }
  return due;
}

WorkerInfo* WorkerRegistry::find(const std::string& id) {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : &it->second;
}

const WorkerInfo* WorkerRegistry::find(const std::string& id) const {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : &it->second;
}

size_t WorkerRegistry::count(WorkerState state) const {
  return static_cast<size_t>(std::count_if(
      workers_.begin(), workers_.end(), [&](const auto& kv) { return kv.second.state == state; }));
}

size_t WorkerRegistry::active_count() const {
  return count(WorkerState::kConnecting) + live_count();
}

size_t WorkerRegistry::live_count() const {
  return count(WorkerState::kReady) + count(WorkerState::kRunning) + count(WorkerState::kStopping);
}

std::vector<WorkerSummary> worker_summaries(const WorkerRegistry& registry) {
  std::vector<WorkerSummary> out;
  out.reserve(registry.workers().size());
  for (const auto& [id, info] : registry.workers()) {
    WorkerSummary w;
    w.id = id;
    w.host = info.host;
    w.pid = info.pid;
    w.state = to_string(info.state);
    w.records = info.records;
    w.conversations_assigned = info.conversations_assigned;
    w.clock_offset_ns = info.offset_ns();
    w.clock_rtt_ns = info.best ? info.best->rtt_ns : int64_t{-1};
    w.max_cpu_percent = info.max_cpu_percent;
    w.max_rss_bytes = info.max_rss_bytes;
    w.legacy_open_sessions = info.last_heartbeat.legacy_open_sessions;
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace convoy::controller
