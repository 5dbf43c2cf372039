// family_makespan: for each conversation family with at least one sub-agent (the lead and its
// sub-agents share conversation_index), the lead's first send to the last end of any of the
// family's requests. Memory: one entry per family in flight and per family with sub-agents
// (kMaxFamilies at most); a lead without sub-agents leaves at its final turn for a short FIFO
// (kRecentLeads), since sub-agents spawned after the lead's last turn come later.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "common/histogram.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

class FamilyMakespans {
 public:
  static constexpr size_t kMaxFamilies = 1'000'000;
  static constexpr size_t kRecentLeads = 4096;

  // One measured request (controller clock).
  void add(const proto::Record& record);
  // The makespans (ns) of the families that have a sub-agent, a lead send and an end after it.
  Histogram makespans() const;
  size_t memory_bytes() const;

 private:
  struct Span {
    int64_t lead_first_send_ns = 0;  // 0 = no lead request seen
    int64_t last_end_ns = 0;
    bool has_subagent = false;
  };
  // The family's span, created when new; null once kMaxFamilies are held.
  Span* family(uint64_t index);

  std::unordered_map<uint64_t, Span> families_;
  std::unordered_map<uint64_t, Span> recent_leads_;  // finished, no sub-agent yet
  std::deque<uint64_t> recent_order_;                // oldest first
};

}  // namespace convoy::controller
