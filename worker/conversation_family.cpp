#include "worker/conversation_family.hpp"

#include <utility>

#include "common/log.hpp"

namespace convoy::worker {

namespace {

// A member that never runs: it counts as finished, so nothing waits for it forever.
void never_runs(FamilyMember& m) {
  m.turns_done = true;
  m.finished = true;
}

}  // namespace

void ConversationFamily::build_members() {
  const proto::Conversation& c = conv;
  members.resize(1 + c.subagents.size());
  FamilyMember& lead = members[0];
  lead.conversation_id = &c.conversation_id;
  lead.correlation_id = &c.correlation_id;
  lead.system_prompt = &c.system_prompt;
  lead.turns = &c.turns;
  lead.next_turn = c.first_turn;
  lead.started = true;
  for (size_t i = 0; i < c.subagents.size(); ++i) link_subagent(i);
  for (const proto::FanIn& edge : c.fan_in) add_fan_in(edge);
  // A fan-in member left with no edge at all would never start.
  for (size_t m = 1; m < members.size(); ++m) {
    FamilyMember& member = members[m];
    if (member.fan_in_start && !member.finished && member.turn_waits.count(0) == 0 &&
        member.start_edges == 0) {
      log_warn("conversation ", c.index, ": sub-agent ", m - 1,
               " waits for nothing and is spawned by no turn; it is not run");
      never_runs(member);
    }
  }
}

void ConversationFamily::link_subagent(size_t i) {
  const proto::SubAgent& sub = conv.subagents[i];
  FamilyMember& m = members[i + 1];
  m.position = static_cast<int32_t>(i);
  m.conversation_id = &sub.conversation_id;
  m.correlation_id = &sub.correlation_id;
  m.system_prompt = &sub.system_prompt;
  m.turns = &sub.turns;
  if (sub.spawn_after_turn == 0) {
    // Started by its fan-in alone; `parent` names the session of its parent header only.
    m.fan_in_start = true;
    const bool known = sub.parent >= -1 &&
                       sub.parent < static_cast<int32_t>(conv.subagents.size()) &&
                       sub.parent != static_cast<int32_t>(i);
    if (!known || sub.turns.empty()) {
      log_warn("conversation ", conv.index, ": sub-agent ", i, " names parent ", sub.parent,
               " (or has no turns); it is not run");
      never_runs(m);
      return;
    }
    m.parent_correlation_id =
        sub.parent < 0 ? &conv.correlation_id : &conv.subagents[sub.parent].correlation_id;
    return;
  }
  // Parents come first (the dataset validates this); a sub-agent that breaks it never starts.
  if (sub.parent < -1 || sub.parent >= static_cast<int32_t>(i)) {
    log_warn("conversation ", conv.index, ": sub-agent ", i, " names parent ", sub.parent,
             ", not an earlier one; it is not run");
    never_runs(m);
    return;
  }
  m.parent = static_cast<size_t>(sub.parent) + 1;
  FamilyMember& parent = members[m.parent];
  if (sub.spawn_after_turn > parent.turns->size() || sub.turns.empty() || parent.finished) {
    log_warn("conversation ", conv.index, ": sub-agent ", i, " spawns after turn ",
             sub.spawn_after_turn, " of a parent with ", parent.turns->size(),
             " turns (or has no turns, or its parent is not run); it is not run");
    m.parent = kNoParent;
    never_runs(m);
    return;
  }
  m.parent_correlation_id = parent.correlation_id;
  parent.children[sub.spawn_after_turn].push_back(i + 1);
}

void ConversationFamily::add_fan_in(const proto::FanIn& edge) {
  const auto n = static_cast<int64_t>(members.size());
  const int64_t waiter = int64_t{edge.member} + 1;
  const int64_t after = int64_t{edge.after} + 1;
  if (waiter < 0 || waiter >= n || after < 0 || after >= n || waiter == after ||
      edge.turn >= members[static_cast<size_t>(waiter)].turns->size()) {
    log_warn("conversation ", conv.index, ": a wait of member ", edge.member, " turn ", edge.turn,
             " for member ", edge.after, " is out of range; it is ignored");
    return;
  }
  FamilyMember& w = members[static_cast<size_t>(waiter)];
  if (edge.turn == 0) ++w.start_edges;
  FamilyMember& a = members[static_cast<size_t>(after)];
  if (a.finished) return;  // never runs: nothing to wait for
  ++w.turn_waits[edge.turn];
  a.waiters.emplace_back(static_cast<size_t>(waiter), edge.turn);
}

bool ConversationFamily::fan_in_met(size_t m, uint32_t turn) const {
  const auto it = members[m].turn_waits.find(turn);
  return it == members[m].turn_waits.end() || it->second == 0;
}

bool ConversationFamily::all_finished() const {
  for (const FamilyMember& member : members) {
    if (!member.finished) return false;
  }
  return true;
}

proto::Record ConversationFamily::record_of(size_t m, uint32_t turn_index, bool final_turn) const {
  const FamilyMember& member = members[m];
  proto::Record r;
  r.x_correlation_id = *member.correlation_id;
  r.conversation_id = *member.conversation_id;
  r.conversation_index = conv.index;
  r.subagent = member.position;
  r.url_index = conv.url_index;
  r.tenant = conv.tenant;
  r.priority = conv.priority;
  r.turn_index = turn_index;
  r.final_turn = final_turn;
  r.phase = conv.phase;
  r.intended_ns = member.intended_ns;
  return r;
}

proto::ConversationEnd ConversationFamily::end() const {
  // The lead's reason, or the first sub-agent's that did not complete.
  proto::EndReason reason = cancelled.value_or(members[0].reason);
  for (const FamilyMember& member : members) {
    if (reason != proto::EndReason::kCompleted) break;
    reason = member.reason;
  }
  proto::ConversationEnd end{conv.index, reason};
  for (const FamilyMember& member : members) {
    if (!member.session_open) continue;
    ++end.sessions_opened;
    if (!member.session_closed) ++end.sessions_left_open;
  }
  return end;
}

std::unique_ptr<ConversationFamily> FamilyPool::take() {
  if (spare_.empty()) return std::make_unique<ConversationFamily>();
  std::unique_ptr<ConversationFamily> f = std::move(spare_.back());
  spare_.pop_back();
  return f;
}

void FamilyPool::give_back(std::unique_ptr<ConversationFamily> f) {
  if (spare_.size() >= kSpareFamilies) return;
  f->conv = proto::Conversation{};
  f->members.clear();  // keeps the capacity
  f->cancelled.reset();
  spare_.push_back(std::move(f));
}

}  // namespace convoy::worker
