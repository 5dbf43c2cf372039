// JSONL families (docs/datasets.md, "Sub-agents" and "Fan-in"): what the validating pass keeps
// of the rows that link to others ("parent", "spawn_after_turn", "wait_for"), how the links are
// resolved once the whole file was read (a row may name one that comes after it), and each kept
// lead's family in the order it crosses the wire, with its fan-in edges. Errors are ConfigError
// "SOURCE:LINE: key: what".
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/dataset/jsonl_reader.hpp"
#include "proto/messages.hpp"

namespace convoy::controller {

// One id a row waits for: `turn` 0 is the row's own "wait_for" (its start), k >= 1 that of
// "turns[k]" (turn k's start).
struct WaitRef {
  uint32_t turn = 0;
  std::string id;
};

// A row's links. A row with "parent" is spawned after its parent's turn spawn_after_turn; a
// row with "wait_for" and no "parent" is spawned by no turn (spawn_after_turn 0): its anchor
// (`parent` here) is the first id it waits for, the session its parent header names.
struct Link {
  std::string parent;
  uint32_t spawn_after_turn = 1;  // 1-based; 0: started by its wait_for alone
  std::vector<WaitRef> waits;     // every wait of the row, its turns' included
};

// What the validating pass keeps of a row that names its conversation_id (one that may be
// named by others).
struct NamedRow {
  int64_t line = 0;
  uint32_t turns = 0;
  int64_t child = -1;  // index into the child rows; -1: a lead
  uint64_t lead = 0;   // a lead's ordinal among the leads
  uint64_t bytes = 0;  // its wire bound
};

using NamedRows = std::unordered_map<IdHash, NamedRow, IdHashHasher>;

// A row that is not a lead (it names a parent or waits at its start), as the validating pass
// saw it.
struct ChildRow {
  uint64_t offset = 0;
  int64_t line = 0;
  Link link;
  uint64_t bytes = 0;
  uint32_t turns = 0;
  // Resolved after the pass: the anchor (a lead's ordinal, or a child row) and the root lead.
  int64_t parent_child = -1;
  uint64_t parent_lead = 0;
  uint64_t root = 0;
};

// A lead's turn that waits (turns[k].wait_for, k >= 1).
struct LeadWait {
  uint64_t lead = 0;  // ordinal among the leads
  int64_t line = 0;
  WaitRef wait;
};

// One sub-agent of a family as the dataset reads it back: its row and its link, by position.
struct FamilyChild {
  uint64_t offset = 0;            // of the row's first byte
  int32_t parent = -1;            // position in the family; -1 = the lead
  uint32_t spawn_after_turn = 1;  // 1 .. the parent's turns; 0: started by its fan-in alone
};

// Families of the kept leads: lead i's sub-agents are children[begin[i] .. begin[i + 1]), in
// family order (anchors before the rows anchored to them), and its fan-in edges are
// fan_in[fan_begin[i] .. fan_begin[i + 1]). Each pair is empty when no row needs it.
struct Families {
  std::vector<uint64_t> begin;
  std::vector<FamilyChild> children;
  std::vector<uint64_t> fan_begin;
  std::vector<proto::FanIn> fan_in;
};

// Links every child row to its anchor and its family's lead. Throws at the child's line for an
// unknown parent or wait, a spawn_after_turn beyond the parent's turns, and a cycle of anchors.
void resolve_parents(std::vector<ChildRow>& children, const NamedRows& named,
                     const std::string& source);

// Every wait names a row of the waiting row's own family (a family runs on one worker): throws
// at the waiting row's line for an unknown id or one in another lead's family.
void check_wait_families(const std::vector<ChildRow>& children,
                         const std::vector<LeadWait>& lead_waits, const NamedRows& named,
                         const std::string& source);

// The families of the first `kept_leads` leads of `leads`, with each family's wire bound and its
// waits checked as a whole (a cycle of waits lists the rows' lines). Every family with a row in
// the file is checked, kept or not.
Families build_families(const std::vector<ChildRow>& children,
                        const std::vector<LeadWait>& lead_waits, const NamedRows& named,
                        uint64_t leads, uint64_t kept_leads, const std::string& source);

}  // namespace convoy::controller
