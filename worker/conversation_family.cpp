#include "worker/conversation_family.hpp"

#include <utility>

#include "common/log.hpp"

namespace convoy::worker {

void ConversationFamily::build_members() {
  const proto::Conversation& c = conv;
  members.resize(1 + c.subagents.size());
  FamilyMember& lead = members[0];
  lead.conversation_id = &c.conversation_id;
  lead.correlation_id = &c.correlation_id;
  lead.system_prompt = &c.system_prompt;
  lead.turns = &c.turns;
  lead.next_turn = c.first_turn;
  for (size_t i = 0; i < c.subagents.size(); ++i) {
    const proto::SubAgent& sub = c.subagents[i];
    FamilyMember& m = members[i + 1];
    m.position = static_cast<int32_t>(i);
    m.conversation_id = &sub.conversation_id;
    m.correlation_id = &sub.correlation_id;
    m.system_prompt = &sub.system_prompt;
    m.turns = &sub.turns;
    // Parents come first (the dataset validates this); a sub-agent that breaks it never starts.
    if (sub.parent < -1 || sub.parent >= static_cast<int32_t>(i)) {
      log_warn("conversation ", c.index, ": sub-agent ", i, " names parent ", sub.parent,
               ", not an earlier one; it is not run");
      continue;
    }
    m.parent = static_cast<size_t>(sub.parent) + 1;
    FamilyMember& parent = members[m.parent];
    if (sub.spawn_after_turn < 1 || sub.spawn_after_turn > parent.turns->size() ||
        sub.turns.empty()) {
      log_warn("conversation ", c.index, ": sub-agent ", i, " spawns after turn ",
               sub.spawn_after_turn, " of a parent with ", parent.turns->size(),
               " turns (or has no turns); it is not run");
      continue;
    }
    m.parent_correlation_id = parent.correlation_id;
    parent.children[sub.spawn_after_turn].push_back(i + 1);
  }
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
