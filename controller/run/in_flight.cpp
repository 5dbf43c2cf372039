#include "controller/run/in_flight.hpp"

#include <algorithm>

#include "controller/dataset/jsonl_reader.hpp"

namespace convoy::controller {

namespace {

// The turns a family would send: the lead's from first_turn, and every sub-agent's.
int64_t planned_turns(const proto::Conversation& c) {
  int64_t planned =
      c.turns.size() > c.first_turn ? static_cast<int64_t>(c.turns.size() - c.first_turn) : 0;
  for (const auto& s : c.subagents) planned += static_cast<int64_t>(s.turns.size());
  return planned;
}

// Cuts a family to `granted` turns: the lead's first, then each sub-agent in order (parents come
// before children) while turns are left, keeping only sub-agents whose parent kept the turn they
// spawn after. Positions are renumbered so every kept sub-agent's parent stays valid.
void cut_family(proto::Conversation& c, int64_t granted) {
  const size_t lead_kept = static_cast<size_t>(std::min<int64_t>(
      granted, static_cast<int64_t>(c.turns.size()) - static_cast<int64_t>(c.first_turn)));
  c.turns.resize(c.first_turn + lead_kept);
  int64_t left = granted - static_cast<int64_t>(lead_kept);
  std::vector<int32_t> new_position(c.subagents.size(), -1);
  std::vector<size_t> kept_turns(c.subagents.size(), 0);
  std::vector<proto::SubAgent> kept;
  for (size_t i = 0; i < c.subagents.size(); ++i) {
    proto::SubAgent& s = c.subagents[i];
    const bool lead_parent = s.parent < 0;
    const auto parent = static_cast<size_t>(std::max(s.parent, 0));
    const bool parent_kept = lead_parent || new_position[parent] >= 0;
    const size_t parent_turns = lead_parent ? c.first_turn + lead_kept : kept_turns[parent];
    if (left <= 0 || !parent_kept || s.spawn_after_turn > parent_turns) continue;
    const auto turns =
        static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(s.turns.size())));
    s.turns.resize(turns);
    left -= static_cast<int64_t>(turns);
    kept_turns[i] = turns;
    if (!lead_parent) s.parent = new_position[parent];
    new_position[i] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(s));
  }
  c.subagents = std::move(kept);
}

}  // namespace

void InFlight::apply_grant(proto::Conversation& c, RequestBudget& budget) {
  if (c.phase != proto::Phase::kMeasure || !budget.limited()) return;
  // A family commits the turns of the lead and of every sub-agent: load.requests counts them all.
  const int64_t planned = planned_turns(c);
  auto [grant, fresh] = grants_.try_emplace(c.index);
  if (fresh) grant->second.granted = budget.commit(planned);
  if (grant->second.granted < planned) cut_family(c, grant->second.granted);
}

void InFlight::queue(const std::string& worker, proto::Conversation c, int64_t intended_ns,
                     const Send& send, bool window) {
  // Each conversation fits one wire message (the dataset checks it at load), but a batch of
  // heavy ones may not: such a batch goes out in several Assigns.
  const uint64_t bytes = wire_bytes_bound(c);
  const auto key = std::make_pair(worker, window);
  proto::Assign& batch = pending_[key];
  batch.window = window;
  if (pending_bytes_[key] + bytes > batch_bytes_) send_batch(worker, batch, send);
  pending_bytes_[key] += bytes;
  Entry e{worker, intended_ns, c.phase, false};
  e.window = window;
  if (window) windows_[c.index] = worker;
  entries_[c.index] = e;
  batch.conversations.push_back(std::move(c));
}

bool InFlight::refilled(const std::string& worker, uint64_t index) {
  auto w = windows_.find(index);
  if (w == windows_.end() || w->second != worker) return false;
  windows_.erase(w);
  if (auto it = entries_.find(index); it != entries_.end()) it->second.window = false;
  return true;
}

bool InFlight::start_oldest_window(
    int64_t intended_ns, const std::function<int64_t(const std::string&)>& worker_offset_ns) {
  if (windows_.empty()) return false;
  auto w = windows_.begin();
  const uint64_t index = w->first;
  const std::string worker = w->second;
  windows_.erase(w);
  if (auto it = entries_.find(index); it != entries_.end()) {
    it->second.window = false;
    it->second.intended_ns = intended_ns;
  }
  // With the window batch: a start queued behind a still-pending window conversation follows it.
  proto::Assign& batch = pending_[{worker, true}];
  batch.window = true;
  batch.start.push_back({index, intended_ns + worker_offset_ns(worker)});
  return true;
}

InFlight::Returned InFlight::returned(const std::string& worker, uint64_t index,
                                      RequestBudget* budget) {
  auto it = entries_.find(index);
  if (it == entries_.end() || it->second.worker != worker || it->second.started) {
    return Returned::kNotHeld;
  }
  const bool window = windows_.erase(index) > 0;
  entries_.erase(it);
  if (auto g = grants_.find(index); g != grants_.end()) {
    // Never started: every granted turn is unsent. Unlike an end that sent nothing (end()),
    // this cannot repeat forever: a worker gives its window back only once it stops starting.
    if (budget) budget->release(g->second.granted, g->second.sent);
    grants_.erase(g);
  }
  return window ? Returned::kWindow : Returned::kSlot;
}

size_t InFlight::window_of(const std::string& worker) const {
  size_t n = 0;
  for (const auto& [index, w] : windows_) n += w == worker ? 1 : 0;
  return n;
}

void InFlight::send_batch(const std::string& worker, proto::Assign& msg, const Send& send) {
  if (msg.conversations.empty() && msg.start.empty()) return;
  send(worker, msg);
  // Positions remembered: a worker that cannot decode part of a batch names it by number and
  // position (undecodable()).
  for (size_t pos = 0; pos < msg.conversations.size(); ++pos) {
    auto it = entries_.find(msg.conversations[pos].index);
    if (it == entries_.end()) continue;
    it->second.batch = msg.batch;
    it->second.batch_pos = static_cast<uint32_t>(pos);
  }
  msg.conversations.clear();
  msg.start.clear();
  pending_bytes_[{worker, msg.window}] = 0;
}

void InFlight::flush(const Send& send) {
  // Direct batches (false) before window ones (true) of the same worker: std::map order.
  for (auto& [key, msg] : pending_) send_batch(key.first, msg, send);
  pending_.clear();
  pending_bytes_.clear();
}

void InFlight::on_record(const proto::Record& r) {
  if (auto it = entries_.find(r.conversation_index); it != entries_.end()) {
    it->second.started = true;
  }
  // final_marker close_request's extra request is not one of the granted turns.
  if (r.phase != proto::Phase::kMeasure || proto::session_release_only(r)) return;
  if (auto g = grants_.find(r.conversation_index); g != grants_.end()) ++g->second.sent;
}

bool InFlight::end(const std::string& worker, uint64_t index, RequestBudget& budget) {
  auto it = entries_.find(index);
  if (it == entries_.end() || it->second.worker != worker) return false;
  entries_.erase(it);
  windows_.erase(index);
  if (auto g = grants_.find(index); g != grants_.end()) {
    // Ended early (aborted, cancelled): the turns it did not send go back to load.requests.
    // Not when it sent nothing at all (a worker that could not take it): were every
    // conversation to fail that way, giving back would assign new ones forever.
    if (g->second.sent > 0) budget.release(g->second.granted, g->second.sent);
    grants_.erase(g);
  }
  return true;
}

std::vector<uint64_t> InFlight::undecodable(const std::string& worker,
                                            const proto::UndecodableAssign& u) const {
  std::vector<uint64_t> named;
  for (const auto& [index, e] : entries_) {
    if (e.worker != worker || e.batch != u.batch) continue;
    const bool listed =
        std::find(u.positions.begin(), u.positions.end(), e.batch_pos) != u.positions.end();
    if (listed || (u.unreadable_from >= 0 && e.batch_pos >= u.unreadable_from)) {
      named.push_back(index);
    }
  }
  return named;
}

InFlight::Taken InFlight::take_worker(const std::string& worker,
                                      const std::function<bool(const Entry&)>& rehome) {
  Taken taken;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.worker != worker) {
      ++it;
      continue;
    }
    const bool window = windows_.erase(it->first) > 0;
    if (rehome(it->second)) {
      taken.rehome.emplace_back(it->first, it->second);
    } else {
      (window ? taken.lost_window : taken.lost).push_back(it->first);
    }
    it = entries_.erase(it);
  }
  return taken;
}

std::vector<uint64_t> InFlight::indexes() const {
  std::vector<uint64_t> out;
  out.reserve(entries_.size());
  for (const auto& [index, e] : entries_) out.push_back(index);
  return out;
}

}  // namespace convoy::controller
