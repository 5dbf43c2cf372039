// FamilyMakespans: a family's lead first send to its last end, families with sub-agents only.
#include "controller/report/family_makespan.hpp"

#include <doctest/doctest.h>

#include "test_time.hpp"

using convoy::controller::FamilyMakespans;
using convoy::proto::Record;

namespace {

Record family_request(uint64_t family, int32_t subagent, int64_t sent_ns, int64_t end_ns,
                      bool final_turn = false) {
  Record r;
  r.conversation_index = family;
  r.subagent = subagent;
  r.sent_ns = sent_ns;
  r.end_ns = end_ns;
  r.final_turn = final_turn;
  return r;
}

}  // namespace

TEST_CASE("family makespan: the lead's first send to the family's last end") {
  FamilyMakespans f;
  f.add(family_request(1, -1, 2 * kS, 3 * kS));
  f.add(family_request(1, 0, 3 * kS, 7 * kS));  // a sub-agent ends last
  f.add(family_request(1, -1, 4 * kS, 5 * kS, true));
  f.add(family_request(2, -1, 1 * kS, 9 * kS, true));  // no sub-agent: no makespan
  const auto h = f.makespans();
  REQUIRE(h.count() == 1);
  CHECK(h.max() == 5 * kS);
}

TEST_CASE("family makespan: a sub-agent after its lead's final turn still counts, memory bounded") {
  FamilyMakespans f;
  f.add(family_request(3, -1, 1 * kS, 2 * kS, true));
  f.add(family_request(3, 0, 2 * kS, 6 * kS));
  CHECK(f.makespans().max() == 5 * kS);
  // Leads without sub-agents leave after kRecentLeads newer ones: memory stays flat.
  for (uint64_t i = 10; i < 10 + FamilyMakespans::kRecentLeads; ++i) {
    f.add(family_request(i, -1, kS, 2 * kS, true));
  }
  const size_t bytes = f.memory_bytes();
  for (uint64_t i = 100'000; i < 100'000 + 2 * FamilyMakespans::kRecentLeads; ++i) {
    f.add(family_request(i, -1, kS, 2 * kS, true));
  }
  CHECK(f.memory_bytes() <= bytes + 64 * sizeof(void*));
  CHECK(f.makespans().count() == 1);
}
