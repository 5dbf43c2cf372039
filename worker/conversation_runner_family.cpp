// ConversationRunner's family bookkeeping: sub-agents spawned after a parent's turn, fan-in
// (a turn or a sub-agent that waits for other members to finish: Conversation.fan_in), members
// that will never run, a member's end and what it lets go on, and a family cancelled by its lead.
// The turn loop itself is in conversation_runner.cpp.
#include <algorithm>

#include "common/clock.hpp"
#include "common/duration.hpp"
#include "worker/conversation_runner.hpp"

namespace convoy::worker {

void ConversationRunner::spawn_children(Family& f, size_t m, uint32_t turns_ended, int64_t end_ns) {
  auto at = f.members[m].children.find(turns_ended);
  if (at == f.members[m].children.end()) return;
  for (size_t child : at->second) {
    ++f.members[m].running_children;
    Member& c = f.members[child];
    c.started = true;
    const double delay_ms = (*c.turns)[0].delay_ms;
    c.next_intended_ns = end_ns + ms_to_ns(delay_ms);
    if (f.fan_in_met(child, 0)) {
      schedule_turn(f, child, c.next_intended_ns);
    } else {
      c.waiting = true;  // its wait_for has members still running
    }
  }
}

// Member m and its sub-agents will never run (its parent's turns ended before spawning it):
// it counts as finished, for the family's end and for whoever waits for it.
void ConversationRunner::skip_member(Family& f, size_t m) {
  Member& member = f.members[m];
  if (member.finished || member.started) return;
  member.turns_done = true;
  member.finished = true;
  for (const auto& [turn, children] : member.children) {
    for (size_t child : children) skip_member(f, child);
  }
  notify_waiters(f, m);
}

// Member m finished: each turn that waited for it has one wait fewer, and one whose last wait
// this was goes on.
void ConversationRunner::notify_waiters(Family& f, size_t m) {
  for (const auto& [waiter, turn] : f.members[m].waiters) {
    uint32_t& left = f.members[waiter].turn_waits[turn];
    if (left == 0 || --left > 0) continue;
    resume_after_fan_in(f, waiter, turn);
  }
}

// Member m's turn `turn` has its fan-in met: start it if nothing else holds it (its sub-agents
// still running, or, for a spawned sub-agent, its parent's turn not yet ended).
void ConversationRunner::resume_after_fan_in(Family& f, size_t m, uint32_t turn) {
  Member& member = f.members[m];
  if (member.turns_done || member.next_turn != turn) return;
  const bool stop = stopping_ || f.cancelled.has_value();
  if (member.fan_in_start && !member.started) {
    member.started = true;
    if (stop) {
      member_done(f, m, proto::EndReason::kCancelled);
      return;
    }
    schedule_turn(f, m, steady_now_ns() + ms_to_ns((*member.turns)[0].delay_ms));
    return;
  }
  if (!member.waiting || member.running_children > 0) return;
  member.waiting = false;
  if (stop) {
    member_done(f, m, proto::EndReason::kCancelled);
    return;
  }
  schedule_turn(f, m, std::max(member.next_intended_ns, steady_now_ns()));
}

// Member m's own requests are over. Its session ends here; it finishes once every sub-agent it
// started has finished. The lead ending early cancels the whole family.
void ConversationRunner::member_done(Family& f, size_t m, proto::EndReason reason) {
  Member& member = f.members[m];
  if (member.turns_done) return;
  member.turns_done = true;
  member.waiting = false;
  member.reason = reason;
  if (member.timer) {
    loop_.cancel_timer(member.timer);
    member.timer = 0;
  }
  router_.on_conversation_end(*member.correlation_id, reason == proto::EndReason::kCompleted);
  // Sub-agents of turns it never reached never run.
  for (const auto& [turn, children] : member.children) {
    for (size_t child : children) skip_member(f, child);
  }
  // Whatever ended it (cancelled, failed, cut by the run's end, or a final turn whose close was
  // not answered 2xx), a session the server may hold gets the release its final turn would
  // have sent.
  release_if_open(f, m);
  // A stopping run lets requests in flight finish (stop_starting); otherwise the lead ending
  // early takes its family with it.
  if (m == 0 && reason != proto::EndReason::kCompleted && !stopping_) cancel_family(f, reason);
  settle(f, m);
}

// Finishes m when it can, then lets its parent go on: the parent's waiting turn is scheduled
// when its last running sub-agent finished, and the parent may finish in turn.
void ConversationRunner::settle(Family& f, size_t m) {
  Member& member = f.members[m];
  if (member.finished || !member.turns_done || member.running_children > 0) return;
  member.finished = true;
  notify_waiters(f, m);
  if (member.parent == kNoParent) return;
  Member& parent = f.members[member.parent];
  --parent.running_children;
  if (parent.running_children > 0) return;
  if (parent.waiting) {
    if (!f.fan_in_met(member.parent, parent.next_turn)) return;  // the rest of its wait_for
    parent.waiting = false;
    if (stopping_ || f.cancelled) {
      member_done(f, member.parent, proto::EndReason::kCancelled);
      return;
    }
    schedule_turn(f, member.parent, std::max(parent.next_intended_ns, steady_now_ns()));
    return;
  }
  settle(f, member.parent);
}

void ConversationRunner::cancel_family(Family& f, proto::EndReason reason) {
  if (f.cancelled) return;
  f.cancelled = reason;
  for (size_t i = 1; i < f.members.size(); ++i) {
    Member& member = f.members[i];
    if (member.turns_done) continue;
    // Its cancellation is recorded when the transport reports it (a later loop iteration).
    if (member.request) {
      http_.cancel(*member.request);
    } else if (member.timer || member.waiting) {
      member_done(f, i, proto::EndReason::kCancelled);
    }
  }
}

}  // namespace convoy::worker
