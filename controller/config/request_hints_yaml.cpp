#include "controller/config/request_hints_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "controller/config/config_keys.hpp"
#include "controller/config/distribution_yaml.hpp"

namespace convoy::config_detail {

namespace {

using yaml_util::format_number;
using yaml_util::Section;

// A list of {name, weight}: names non-empty and distinct, weights > 0.
std::vector<WeightedName> read_weighted_names(const Section& s, std::string_view key) {
  const YAML::Node list = s.node(key);
  const std::string path = s.path(key);
  if (!list.IsSequence() || list.size() == 0) {
    s.source().fail(
        path, "expected a non-empty list of {name, weight}, got " + yaml_util::describe(list));
  }
  std::vector<WeightedName> out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Section item(s.source(), list[i], path + "[" + std::to_string(i) + "]",
                       config_keys::kWeightedNameKeys);
    WeightedName w;
    item.check(item.present("name"), "name", "each entry needs a name");
    item.read("name", w.name);
    item.check(!w.name.empty(), "name", "must not be empty");
    item.check(seen.insert(w.name).second, "name", "'" + w.name + "' is listed twice");
    item.read("weight", w.weight);
    item.check(w.weight > 0, "weight", "must be greater than 0, got " + format_number(w.weight));
    out.push_back(std::move(w));
  }
  return out;
}

// A hint drawn per conversation: a number or a distribution, its mean inside [lo, hi].
std::optional<Distribution> read_hint(const Section& h, std::string_view key, double lo,
                                      double hi) {
  if (!h.present(key) || h.node(key).IsNull()) return std::nullopt;
  Distribution d{0, 0, lo, hi};
  read_distribution(h, key, d, lo);
  double top = d.max ? std::max(*d.max, d.mean) : d.mean;
  for (const MixComponent& c : d.mix)
    top = std::max(top, c.max ? std::max(*c.max, c.mean) : c.mean);
  h.check(top <= hi, key,
          "must be at most " + format_number(hi) + " (Dynamo's range), got " + format_number(top));
  if (!d.max) d.max = hi;  // draws stay inside Dynamo's range
  return d;
}

void read_agent_hints(const Section& s, DatasetConfig& d) {
  const YAML::Node n = s.node("agent_hints");
  if (!n.IsDefined() || n.IsNull()) {
    if (n.IsDefined()) d.agent_hints.reset();
    return;
  }
  const Section h = s.section("agent_hints", config_keys::kAgentHintsKeys);
  AgentHintsConfig a;
  a.priority = read_hint(h, "priority", kMinPriority, kMaxPriority);
  a.strict_priority = read_hint(h, "strict_priority", 0, kMaxStrictPriority);
  h.read("osl", a.osl);
  if (h.present("speculative_prefill") && !h.node("speculative_prefill").IsNull()) {
    bool v = false;
    h.read("speculative_prefill", v);
    a.speculative_prefill = v;
  }
  h.check(!a.empty(), "priority",
          "agent_hints names no hint: give priority, strict_priority, osl or speculative_prefill "
          "(or null for none)");
  d.agent_hints = a;
}

std::string hint_yaml(const std::optional<Distribution>& d) {
  return d ? distribution_yaml(*d) : std::string("null");
}

}  // namespace

void read_request_hints(const Section& s, DatasetConfig& d) {
  if (s.present("tenants")) {
    d.tenants.clear();
    if (!s.node("tenants").IsNull()) d.tenants = read_weighted_names(s, "tenants");
  }
  read_agent_hints(s, d);
}

std::string request_hints_yaml(const DatasetConfig& d) {
  std::string y = "  tenants: ";
  if (d.tenants.empty()) y += "null";
  for (std::size_t i = 0; i < d.tenants.size(); ++i) {
    y += (i ? ", " : "[") + std::string("{name: ") + yaml_util::quote(d.tenants[i].name) +
         ", weight: " + format_number(d.tenants[i].weight) + "}";
  }
  y += d.tenants.empty() ? "\n" : "]\n";
  if (!d.agent_hints) return y + "  agent_hints: null\n";
  const AgentHintsConfig& a = *d.agent_hints;
  y += "  agent_hints:\n    priority: " + hint_yaml(a.priority) +
       "\n    strict_priority: " + hint_yaml(a.strict_priority) +
       "\n    osl: " + (a.osl ? "true" : "false") + "\n    speculative_prefill: " +
       (a.speculative_prefill ? (*a.speculative_prefill ? "true" : "false") : "null") + "\n";
  return y;
}

}  // namespace convoy::config_detail
