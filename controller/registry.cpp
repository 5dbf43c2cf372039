#include "controller/registry.hpp"

#include <algorithm>

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

std::optional<std::string> WorkerRegistry::on_hello(const proto::Hello& hello, int64_t now_ns) {
  if (hello.protocol_version != proto::kProtocolVersion) {
    return "protocol version mismatch: worker " + hello.worker_id + " speaks version " +
           std::to_string(hello.protocol_version) + ", this controller speaks version " +
           std::to_string(proto::kProtocolVersion) + "; run the same convoy release on both";
  }
  auto [it, inserted] = workers_.try_emplace(hello.worker_id);
  WorkerInfo& w = it->second;
  if (!inserted && w.state != WorkerState::kLost && w.state != WorkerState::kDone) {
    // A repeated hello (the worker retries until welcomed): keep the state.
    w.last_seen_ns = now_ns;
    return std::nullopt;
  }
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
  w->last_heartbeat = hb;
  w->max_cpu_percent = std::max(w->max_cpu_percent, hb.cpu_percent);
  w->max_rss_bytes = std::max(w->max_rss_bytes, hb.rss_bytes);
}

bool WorkerRegistry::on_pong(const std::string& id, const proto::Pong& pong, int64_t now_ns) {
  WorkerInfo* w = find(id);
  if (!w) return false;
  on_seen(id, now_ns);
  ClockSample s =
      clock_sample(pong.controller_send_ns, pong.worker_recv_ns, pong.worker_send_ns, now_ns);
  if (s.rtt_ns < 0) return false;  // impossible: a reordered or forged pong
  w->samples.push_back(s);
  if (w->samples.size() > 2 * kClockPings) w->samples.erase(w->samples.begin());
  // The minimum round trip has the least queueing noise, so its offset is the best estimate.
  w->best = *std::min_element(
      w->samples.begin(), w->samples.end(),
      [](const ClockSample& a, const ClockSample& b) { return a.rtt_ns < b.rtt_ns; });
  if (w->state == WorkerState::kConnecting && w->samples.size() >= kClockPings) {
    w->state = WorkerState::kReady;
    return true;
  }
  return false;
}

void WorkerRegistry::set_state(const std::string& id, WorkerState state) {
  if (auto* w = find(id)) w->state = state;
}

std::vector<std::string> WorkerRegistry::expire(int64_t now_ns) {
  std::vector<std::string> lost;
  for (auto& [id, w] : workers_) {
    if (w.state == WorkerState::kLost || w.state == WorkerState::kDone) continue;
    if (now_ns - w.last_seen_ns > kMissedHeartbeats * kHeartbeatPeriodNs) {
      w.state = WorkerState::kLost;
      lost.push_back(id);
    }
  }
  return lost;
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

size_t WorkerRegistry::live_count() const {
  return count(WorkerState::kReady) + count(WorkerState::kRunning) + count(WorkerState::kStopping);
}

}  // namespace convoy::controller
