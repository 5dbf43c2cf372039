// Whether a family with fan-in (JSONL wait_for) can run to its end: every wait is an edge "this
// cannot happen before that member finished", and a cycle of such edges would hold the family on
// its worker forever. Pure: the members' shape and the edges in, a cycle out.
#pragma once

#include <cstdint>
#include <vector>

#include "proto/messages.hpp"

namespace convoy::controller {

// One member of a family as the check sees it. Member 0 is the lead; member i + 1 is
// Conversation.subagents[i].
struct DagMember {
  int32_t parent = -1;            // position in subagents; -1 = the lead (ignored for the lead)
  uint32_t spawn_after_turn = 1;  // 1-based turn of the parent that spawns it; 0: fan-in only
  uint32_t turns = 1;             // its turn count, >= 1
};

// The members (by family position: 0 = the lead, i + 1 = sub-agent i) on a cycle of waits, in
// the order one waits for the next; empty when the family can run to its end. `members[0]` is
// the lead. `fan_in` uses proto::FanIn's numbering (-1 = the lead).
//
// The events are each member's start, the end of each of its turns and its finish (its turns and
// every sub-agent it spawned). A sub-agent starts after its parent's turn spawn_after_turn ended,
// and that parent's next turn and its finish wait for the sub-agent's finish; a fan-in edge makes
// a member's turn (0: its start) wait for another member's finish.
std::vector<size_t> find_wait_cycle(const std::vector<DagMember>& members,
                                    const std::vector<proto::FanIn>& fan_in);

}  // namespace convoy::controller
