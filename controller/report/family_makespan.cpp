#include "controller/report/family_makespan.hpp"

#include <algorithm>

namespace convoy::controller {

void FamilyMakespans::add(const proto::Record& record) {
  Span* f = family(record.conversation_index);
  if (f == nullptr) return;
  if (record.subagent < 0) {
    if (record.sent_ns > 0 &&
        (f->lead_first_send_ns == 0 || record.sent_ns < f->lead_first_send_ns)) {
      f->lead_first_send_ns = record.sent_ns;
    }
  } else {
    f->has_subagent = true;
  }
  f->last_end_ns = std::max(f->last_end_ns, record.end_ns);
  if (record.subagent < 0 && record.final_turn && !f->has_subagent) {
    // Most families have no sub-agent: keep the lead only a little longer, in case a sub-agent
    // spawned after its last turn is still to come.
    recent_leads_[record.conversation_index] = *f;
    recent_order_.push_back(record.conversation_index);
    families_.erase(record.conversation_index);
    if (recent_order_.size() > kRecentLeads) {
      recent_leads_.erase(recent_order_.front());
      recent_order_.pop_front();
    }
  }
}

FamilyMakespans::Span* FamilyMakespans::family(uint64_t index) {
  if (auto it = families_.find(index); it != families_.end()) return &it->second;
  if (families_.size() >= kMaxFamilies) return nullptr;
  Span span;
  if (auto recent = recent_leads_.find(index); recent != recent_leads_.end()) {
    span = recent->second;
    recent_leads_.erase(recent);  // its stale recent_order_ entry erases nothing later
  }
  return &families_.emplace(index, span).first->second;
}

Histogram FamilyMakespans::makespans() const {
  Histogram makespan;
  for (const auto& [index, f] : families_) {
    if (f.has_subagent && f.lead_first_send_ns > 0 && f.last_end_ns > f.lead_first_send_ns) {
      makespan.record(f.last_end_ns - f.lead_first_send_ns);
    }
  }
  return makespan;
}

size_t FamilyMakespans::memory_bytes() const {
  const size_t node = sizeof(uint64_t) + sizeof(Span) + 2 * sizeof(void*);
  return (families_.size() + recent_leads_.size()) * node +
         (families_.bucket_count() + recent_leads_.bucket_count()) * sizeof(void*) +
         recent_order_.size() * sizeof(uint64_t);
}

}  // namespace convoy::controller
