// ConversationFamily and FamilyPool: how a family's members are built from a Conversation, the
// record fields they stamp, how the family's end is told, and the reuse of ended families.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "worker/conversation_family.hpp"

namespace proto = convoy::proto;
using convoy::worker::ConversationFamily;
using convoy::worker::FamilyPool;
using convoy::worker::kNoParent;

// One namespace per test file: the helpers' names stay apart in a unity build.
namespace family_test {

std::vector<proto::Turn> turns(size_t n) { return std::vector<proto::Turn>(n); }

proto::SubAgent subagent(const std::string& id, int32_t parent, uint32_t after, size_t n_turns) {
  proto::SubAgent s;
  s.conversation_id = id;
  s.correlation_id = "corr-" + id;
  s.parent = parent;
  s.spawn_after_turn = after;
  s.turns = turns(n_turns);
  return s;
}

// A lead of 3 turns; sub-agent 0 after its turn 1, sub-agent 1 under sub-agent 0 after its
// turn 2, and two that never start: a parent that is not earlier, a turn the parent lacks.
// Built in place: the members point into f.conv.
void fill(ConversationFamily& f) {
  f.conv.index = 12;
  f.conv.conversation_id = "lead";
  f.conv.correlation_id = "corr-lead";
  f.conv.url_index = 1;
  f.conv.turns = turns(3);
  f.conv.subagents = {subagent("a", -1, 1, 2), subagent("b", 0, 2, 1), subagent("c", 3, 1, 1),
                      subagent("d", -1, 4, 1)};
  f.build_members();
}

TEST_CASE("conversation family: members link to their parents, broken sub-agents never start") {
  ConversationFamily f;
  fill(f);
  REQUIRE(f.members.size() == 5);
  CHECK(f.members[0].parent == kNoParent);
  CHECK(f.members[0].position == -1);
  CHECK(*f.members[0].correlation_id == "corr-lead");
  CHECK(f.members[0].children.at(1) == std::vector<size_t>{1});
  CHECK(f.members[1].parent == 0);
  CHECK(*f.members[1].parent_correlation_id == "corr-lead");
  CHECK(f.members[1].children.at(2) == std::vector<size_t>{2});
  CHECK(f.members[2].parent == 1);
  CHECK(*f.members[2].parent_correlation_id == "corr-a");
  CHECK(f.members[3].parent_correlation_id == nullptr);  // names a later parent
  CHECK(f.members[4].parent_correlation_id == nullptr);  // after turn 4 of a 3-turn lead
  CHECK(f.members[0].children.size() == 1);              // "d" was not linked
}

TEST_CASE("conversation family: a member's record carries its own ids") {
  ConversationFamily f;
  fill(f);
  f.members[2].intended_ns = 777;
  const proto::Record r = f.record_of(2, 0, true);
  CHECK(r.conversation_index == 12);
  CHECK(r.conversation_id == "b");
  CHECK(r.x_correlation_id == "corr-b");
  CHECK(r.subagent == 1);
  CHECK(r.url_index == 1);
  CHECK(r.turn_index == 0);
  CHECK(r.final_turn);
  CHECK(r.intended_ns == 777);
}

TEST_CASE("conversation family: the end tells the first reason that was not completion") {
  ConversationFamily f;
  fill(f);
  SUBCASE("all completed") { CHECK(f.end().reason == proto::EndReason::kCompleted); }
  SUBCASE("a sub-agent aborted") {
    f.members[2].reason = proto::EndReason::kAborted;
    f.members[3].reason = proto::EndReason::kCancelled;
    CHECK(f.end().reason == proto::EndReason::kAborted);
  }
  SUBCASE("the family was cancelled") {
    f.cancelled = proto::EndReason::kCancelled;
    f.members[1].reason = proto::EndReason::kAborted;
    CHECK(f.end().reason == proto::EndReason::kCancelled);
  }
  SUBCASE("sessions opened and left open") {
    f.members[0].session_open = true;
    f.members[0].session_closed = true;
    f.members[1].session_open = true;
    const proto::ConversationEnd end = f.end();
    CHECK(end.conversation_index == 12);
    CHECK(end.sessions_opened == 2);
    CHECK(end.sessions_left_open == 1);
  }
}

TEST_CASE("family pool: an ended family comes back reset, its member vector kept") {
  FamilyPool pool;
  std::unique_ptr<ConversationFamily> f = pool.take();
  fill(*f);
  f->cancelled = proto::EndReason::kAborted;
  const ConversationFamily* address = f.get();
  const size_t capacity = f->members.capacity();
  pool.give_back(std::move(f));
  std::unique_ptr<ConversationFamily> again = pool.take();
  CHECK(again.get() == address);
  CHECK(again->members.empty());
  CHECK(again->members.capacity() == capacity);
  CHECK_FALSE(again->cancelled.has_value());
  CHECK(again->conv.subagents.empty());
  CHECK(pool.take().get() != address);  // the pool is empty again: a new one
}

}  // namespace family_test
