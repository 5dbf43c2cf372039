#include "controller/dataset/jsonl_families.hpp"

#include <algorithm>

#include "controller/config/config.hpp"
#include "controller/config/limits.hpp"
#include "controller/dataset/family_dag.hpp"

namespace convoy::controller {

namespace {

// Sub-agent rows in one family, bounded: a family runs on one worker, which starts the
// children of a turn together; 100,000 of them kept a worker from its heartbeats for over 3 s.
// The same bound as dataset.subagents.count.
constexpr auto kMaxFamilySubagents = static_cast<uint64_t>(limits::kMaxSubagents);
// What one fan-in edge weighs in an Assign at most (a map of three small integers).
constexpr uint64_t kFanInWireBytes = 48;

std::string at_line(const std::string& source, int64_t line) {
  return source + ":" + std::to_string(line) + ": ";
}

// The key a row's wait is written under.
std::string wait_key(uint32_t turn) {
  return turn == 0 ? "wait_for" : "turns[" + std::to_string(turn) + "].wait_for";
}

std::string list_lines(const std::vector<int64_t>& lines) {
  std::string out;
  for (const int64_t line : lines) out += (out.empty() ? "" : ", ") + std::to_string(line);
  return out;
}

}  // namespace

void resolve_parents(std::vector<ChildRow>& children, const NamedRows& named,
                     const std::string& source) {
  for (auto& child : children) {
    const bool fan_in_only = child.link.spawn_after_turn == 0;
    const auto it = named.find(hash_id(child.link.parent));
    if (it == named.end()) {
      throw ConfigError(at_line(source, child.line) + (fan_in_only ? "wait_for" : "parent") +
                        ": \"" + child.link.parent + "\" is not the conversation_id of any row");
    }
    const NamedRow& parent = it->second;
    if (child.link.spawn_after_turn > parent.turns) {
      throw ConfigError(at_line(source, child.line) + "spawn_after_turn: " +
                        std::to_string(child.link.spawn_after_turn) + " is beyond the " +
                        std::to_string(parent.turns) + " turn(s) of its parent \"" +
                        child.link.parent + "\" (line " + std::to_string(parent.line) + ")");
    }
    child.parent_child = parent.child;
    child.parent_lead = parent.lead;
  }
  // Roots, by walking up; 0 = not yet, 1 = on the current walk, 2 = done.
  std::vector<uint8_t> state(children.size(), 0);
  std::vector<size_t> path;
  for (size_t start = 0; start < children.size(); ++start) {
    path.clear();
    size_t at = start;
    while (state[at] == 0) {
      state[at] = 1;
      path.push_back(at);
      if (children[at].parent_child < 0) break;
      at = static_cast<size_t>(children[at].parent_child);
    }
    if (state[at] == 1 && children[at].parent_child >= 0) {
      // `at` is on this walk and has an anchor: the walk came back to it.
      std::vector<int64_t> lines;
      const auto from = std::find(path.begin(), path.end(), at);
      for (auto p = from; p != path.end(); ++p) lines.push_back(children[*p].line);
      const bool waits = children[at].link.spawn_after_turn == 0;
      throw ConfigError(at_line(source, children[at].line) + (waits ? "wait_for" : "parent") +
                        ": the rows on lines " + list_lines(lines) +
                        (waits ? " wait for each other (or are each other's parents)"
                               : " are each other's parents") +
                        " in a cycle: a family needs a lead (a row without \"parent\" and "
                        "without \"wait_for\")");
    }
    const uint64_t root =
        children[at].parent_child < 0 ? children[at].parent_lead : children[at].root;
    for (const size_t p : path) {
      children[p].root = root;
      state[p] = 2;
    }
  }
}

namespace {

// The line of each lead that heads a family (leads others name are named rows).
std::unordered_map<uint64_t, int64_t> lead_lines(const NamedRows& named) {
  std::unordered_map<uint64_t, int64_t> lines;
  for (const auto& [hash, row] : named) {
    if (row.child < 0) lines.emplace(row.lead, row.line);
  }
  return lines;
}

// One wait of a row on `line` whose family's lead is `root`.
void check_one_wait(const WaitRef& wait, int64_t line, uint64_t root,
                    const std::vector<ChildRow>& children, const NamedRows& named,
                    const std::unordered_map<uint64_t, int64_t>& leads, const std::string& source) {
  const auto it = named.find(hash_id(wait.id));
  if (it == named.end()) {
    throw ConfigError(at_line(source, line) + wait_key(wait.turn) + ": \"" + wait.id +
                      "\" is not the conversation_id of any row");
  }
  const NamedRow& target = it->second;
  const uint64_t target_root =
      target.child < 0 ? target.lead : children[static_cast<size_t>(target.child)].root;
  if (target_root == root) return;
  const auto line_of = [&](uint64_t lead) {
    const auto l = leads.find(lead);
    return l == leads.end() ? std::string("?") : std::to_string(l->second);
  };
  throw ConfigError(at_line(source, line) + wait_key(wait.turn) + ": \"" + wait.id + "\" (line " +
                    std::to_string(target.line) + ") belongs to the family of the lead on line " +
                    line_of(target_root) + ", this row to that of the lead on line " +
                    line_of(root) +
                    ": a family runs on one worker, so wait_for cannot join two leads' families "
                    "(make one lead a sub-agent of the other, or wait within one family)");
}

}  // namespace

void check_wait_families(const std::vector<ChildRow>& children,
                         const std::vector<LeadWait>& lead_waits, const NamedRows& named,
                         const std::string& source) {
  const auto leads = lead_lines(named);
  for (const ChildRow& child : children) {
    for (const WaitRef& wait : child.link.waits) {
      check_one_wait(wait, child.line, child.root, children, named, leads, source);
    }
  }
  for (const LeadWait& w : lead_waits) {
    check_one_wait(w.wait, w.line, w.lead, children, named, leads, source);
  }
}

namespace {

// One family as it is put together: its members in family order and what the checks need.
struct FamilyBuild {
  std::vector<FamilyChild> children;
  std::vector<DagMember> shape;  // 0: the lead, i + 1: children[i]
  std::vector<int64_t> lines;    // the same numbering
  std::vector<size_t> rows;      // children[i]'s index among the child rows
  std::vector<proto::FanIn> fan_in;
  uint64_t bytes = 0;
};

// The family order: depth first from the lead, siblings in file order; each row's position.
void order_family(uint64_t lead, const std::vector<ChildRow>& children,
                  const std::unordered_map<uint64_t, std::vector<size_t>>& of_lead,
                  const std::vector<std::vector<size_t>>& of_child, std::vector<int32_t>& position,
                  FamilyBuild& out) {
  struct Pending {
    size_t child;
    int32_t parent;
  };
  std::vector<Pending> stack;
  const auto direct = of_lead.find(lead);
  if (direct == of_lead.end()) return;
  for (auto c = direct->second.rbegin(); c != direct->second.rend(); ++c) {
    stack.push_back({*c, -1});
  }
  while (!stack.empty()) {
    const Pending next = stack.back();
    stack.pop_back();
    const auto at = static_cast<int32_t>(out.children.size());
    position[next.child] = at;
    const ChildRow& row = children[next.child];
    out.children.push_back({row.offset, next.parent, row.link.spawn_after_turn});
    out.shape.push_back({next.parent, row.link.spawn_after_turn, row.turns});
    out.lines.push_back(row.line);
    out.rows.push_back(next.child);
    out.bytes += row.bytes;
    const auto& grand = of_child[next.child];
    for (auto g = grand.rbegin(); g != grand.rend(); ++g) stack.push_back({*g, at});
  }
}

// The family's fan-in edges, its members' waits resolved to positions (each names a row of
// this family: check_wait_families saw to it).
void family_fan_in(const std::vector<size_t>* own_lead_waits,
                   const std::vector<LeadWait>& lead_waits, const std::vector<ChildRow>& children,
                   const NamedRows& named, const std::vector<int32_t>& position, FamilyBuild& out) {
  const auto member_of = [&](const std::string& id) {
    const NamedRow& row = named.at(hash_id(id));
    return row.child < 0 ? int32_t{-1} : position[static_cast<size_t>(row.child)];
  };
  if (own_lead_waits != nullptr) {
    for (const size_t w : *own_lead_waits) {
      out.fan_in.push_back({-1, lead_waits[w].wait.turn, member_of(lead_waits[w].wait.id)});
    }
  }
  for (size_t i = 0; i < out.rows.size(); ++i) {
    for (const WaitRef& wait : children[out.rows[i]].link.waits) {
      out.fan_in.push_back({static_cast<int32_t>(i), wait.turn, member_of(wait.id)});
    }
  }
}

// Throws at the lead's line when the family could not cross the wire or run to its end.
void check_family(const FamilyBuild& family, const std::string& source) {
  const int64_t lead_line = family.lines[0];
  const size_t subagents = family.children.size();
  if (subagents > kMaxFamilySubagents) {
    throw ConfigError(at_line(source, lead_line) + "conversation_id: its family has " +
                      std::to_string(subagents) + " sub-agent rows, more than " +
                      std::to_string(kMaxFamilySubagents) +
                      " (a family runs on one worker; split it into several families)");
  }
  const uint64_t bytes = family.bytes + kFanInWireBytes * family.fan_in.size();
  if (bytes > kMaxConversationWireBytes) {
    throw ConfigError(at_line(source, lead_line) + "conversation_id: its family (this row " +
                      "and " + std::to_string(subagents) + " sub-agent row(s)) would be " +
                      describe_bytes(bytes) + " on the wire, more than one conversation may be (" +
                      describe_bytes(kMaxConversationWireBytes) +
                      "): a family crosses to its worker in one piece");
  }
  if (family.fan_in.empty()) return;
  const std::vector<size_t> cycle = find_wait_cycle(family.shape, family.fan_in);
  if (cycle.empty()) return;
  std::vector<int64_t> lines;
  lines.reserve(cycle.size());
  for (const size_t m : cycle) lines.push_back(family.lines[m]);
  throw ConfigError(at_line(source, lines[0]) + "wait_for: the rows on lines " + list_lines(lines) +
                    " wait for each other in a cycle (each waits, through wait_for, a parent's "
                    "turn or a sub-agent, for the next to finish), so none could ever start");
}

}  // namespace

Families build_families(const std::vector<ChildRow>& children,
                        const std::vector<LeadWait>& lead_waits, const NamedRows& named,
                        uint64_t leads, uint64_t kept_leads, const std::string& source) {
  Families families;
  if (children.empty()) return families;
  // Direct children of each lead and of each child row, in file order.
  std::unordered_map<uint64_t, std::vector<size_t>> of_lead;
  std::vector<std::vector<size_t>> of_child(children.size());
  for (size_t c = 0; c < children.size(); ++c) {
    if (children[c].parent_child < 0) {
      of_lead[children[c].parent_lead].push_back(c);
    } else {
      of_child[static_cast<size_t>(children[c].parent_child)].push_back(c);
    }
  }
  std::unordered_map<uint64_t, const NamedRow*> lead_rows;
  for (const auto& [hash, row] : named) {
    if (row.child < 0) lead_rows.emplace(row.lead, &row);
  }
  std::unordered_map<uint64_t, std::vector<size_t>> waits_of_lead;
  for (size_t w = 0; w < lead_waits.size(); ++w) waits_of_lead[lead_waits[w].lead].push_back(w);
  std::vector<int32_t> position(children.size(), -1);
  families.begin.reserve(kept_leads + 1);
  families.fan_begin.reserve(kept_leads + 1);
  FamilyBuild family;
  for (uint64_t lead = 0; lead < leads; ++lead) {
    if (lead < kept_leads) {
      families.begin.push_back(families.children.size());
      families.fan_begin.push_back(families.fan_in.size());
    }
    if (of_lead.count(lead) == 0) continue;  // no sub-agent: no wait can be met in it either
    const NamedRow& lead_row = *lead_rows.at(lead);
    family = FamilyBuild{};
    family.shape.push_back({-1, 1, lead_row.turns});
    family.lines.push_back(lead_row.line);
    family.bytes = lead_row.bytes;
    order_family(lead, children, of_lead, of_child, position, family);
    const auto own = waits_of_lead.find(lead);
    family_fan_in(own == waits_of_lead.end() ? nullptr : &own->second, lead_waits, children, named,
                  position, family);
    check_family(family, source);
    if (lead >= kept_leads) continue;
    families.children.insert(families.children.end(), family.children.begin(),
                             family.children.end());
    families.fan_in.insert(families.fan_in.end(), family.fan_in.begin(), family.fan_in.end());
  }
  families.begin.push_back(families.children.size());
  families.fan_begin.push_back(families.fan_in.size());
  families.children.shrink_to_fit();
  families.fan_in.shrink_to_fit();
  return families;
}

}  // namespace convoy::controller
