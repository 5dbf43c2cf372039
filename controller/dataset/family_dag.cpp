#include "controller/dataset/family_dag.hpp"

#include <utility>

namespace convoy::controller {

namespace {

// The event graph: per member, its start, the end of each turn and its finish. deps[x] lists
// the events x waits for.
class EventGraph {
 public:
  explicit EventGraph(const std::vector<DagMember>& members) : members_(members) {
    base_.reserve(members.size());
    size_t n = 0;
    for (const DagMember& m : members) {
      base_.push_back(n);
      n += 2 + m.turns;
    }
    deps_.resize(n);
    member_of_.resize(n);
    for (size_t m = 0; m < members.size(); ++m) {
      for (size_t x = base_[m]; x < base_[m] + 2 + members[m].turns; ++x) member_of_[x] = m;
    }
  }

  size_t start(size_t m) const { return base_[m]; }
  size_t turn_end(size_t m, uint32_t k) const { return base_[m] + 1 + k; }
  size_t finish(size_t m) const { return base_[m] + 1 + members_[m].turns; }
  void wait(size_t event, size_t on) { deps_[event].push_back(on); }
  size_t size() const { return deps_.size(); }
  const std::vector<size_t>& deps(size_t x) const { return deps_[x]; }
  size_t member_of(size_t x) const { return member_of_[x]; }

 private:
  const std::vector<DagMember>& members_;
  std::vector<size_t> base_;
  std::vector<std::vector<size_t>> deps_;
  std::vector<size_t> member_of_;
};

void add_tree_edges(const std::vector<DagMember>& members, EventGraph& g) {
  for (size_t m = 0; m < members.size(); ++m) {
    const uint32_t turns = members[m].turns;
    g.wait(g.turn_end(m, 0), g.start(m));
    for (uint32_t k = 1; k < turns; ++k) g.wait(g.turn_end(m, k), g.turn_end(m, k - 1));
    g.wait(g.finish(m), g.turn_end(m, turns - 1));
    if (m == 0 || members[m].spawn_after_turn == 0) continue;
    const int64_t parent_position = int64_t{members[m].parent} + 1;
    if (parent_position < 0 || parent_position >= static_cast<int64_t>(members.size())) continue;
    const auto p = static_cast<size_t>(parent_position);
    const uint32_t s = members[m].spawn_after_turn;
    if (s > members[p].turns) continue;
    g.wait(g.start(m), g.turn_end(p, s - 1));
    if (s < members[p].turns) g.wait(g.turn_end(p, s), g.finish(m));
    g.wait(g.finish(p), g.finish(m));
  }
}

// The cycle through `stack` from the first occurrence of `back_to`, as members.
std::vector<size_t> cycle_members(const std::vector<std::pair<size_t, size_t>>& stack,
                                  size_t back_to, const EventGraph& g) {
  size_t from = 0;
  while (stack[from].first != back_to) ++from;
  std::vector<size_t> out;
  for (size_t i = from; i < stack.size(); ++i) {
    const size_t m = g.member_of(stack[i].first);
    if (out.empty() || out.back() != m) out.push_back(m);
  }
  while (out.size() > 1 && out.front() == out.back()) out.pop_back();
  return out;
}

}  // namespace

std::vector<size_t> find_wait_cycle(const std::vector<DagMember>& members,
                                    const std::vector<proto::FanIn>& fan_in) {
  if (members.empty()) return {};
  EventGraph g(members);
  add_tree_edges(members, g);
  const auto n = static_cast<int64_t>(members.size());
  for (const proto::FanIn& e : fan_in) {
    const int64_t w = int64_t{e.member} + 1;
    const int64_t a = int64_t{e.after} + 1;
    if (w < 0 || w >= n || a < 0 || a >= n) continue;
    const auto wm = static_cast<size_t>(w);
    if (e.turn >= members[wm].turns) continue;
    const size_t gated = e.turn == 0 ? g.start(wm) : g.turn_end(wm, e.turn);
    g.wait(gated, g.finish(static_cast<size_t>(a)));
  }
  // Depth first over "waits for"; a grey event met again closes a cycle.
  std::vector<uint8_t> colour(g.size(), 0);      // 0 white, 1 grey (on the stack), 2 black
  std::vector<std::pair<size_t, size_t>> stack;  // (event, next dependency to visit)
  for (size_t root = 0; root < g.size(); ++root) {
    if (colour[root] != 0) continue;
    colour[root] = 1;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [x, next] = stack.back();
      if (next == g.deps(x).size()) {
        colour[x] = 2;
        stack.pop_back();
        continue;
      }
      const size_t y = g.deps(x)[next++];
      if (colour[y] == 1) return cycle_members(stack, y, g);
      if (colour[y] == 0) {
        colour[y] = 1;
        stack.emplace_back(y, 0);
      }
    }
  }
  return {};
}

}  // namespace convoy::controller
