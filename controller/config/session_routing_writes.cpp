#include "controller/config/session_routing_writes.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include "controller/config/did_you_mean.hpp"

namespace convoy {

namespace {

using proto::RouterPreset;
using proto::RoutingSource;
using proto::RoutingWrite;
using proto::SessionRoutingMode;

const std::vector<std::string_view> kCustomKeys = {"headers", "body"};
// The body members convoy writes itself: a routing key there would replace the request.
constexpr std::string_view kOwnBodyKeys[] = {"model",  "messages",      "prompt",
                                             "input",  "max_tokens",    "max_completion_tokens",
                                             "stream", "stream_options"};

bool same_header(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Two body paths collide when equal or when one holds the other ("a" and "a.b").
bool same_place(const RoutingWrite& a, const RoutingWrite& b) {
  if (a.header != b.header) return false;
  if (a.header) return same_header(a.name, b.name);
  const std::string& s = a.name.size() <= b.name.size() ? a.name : b.name;
  const std::string& l = a.name.size() <= b.name.size() ? b.name : a.name;
  return l.compare(0, s.size(), s) == 0 && (l.size() == s.size() || l[s.size()] == '.');
}

bool is_token(std::string_view s) {
  constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kExtra.find(c) != std::string_view::npos;
  });
}

std::string path_problem(std::string_view path) {
  if (path.empty()) return "an empty body path";
  size_t from = 0;
  while (true) {
    const size_t dot = path.find('.', from);
    if (path.substr(from, dot - from).empty()) return "an empty key in '" + std::string(path) + "'";
    if (dot == std::string_view::npos) break;
    from = dot + 1;
  }
  const std::string_view first = path.substr(0, path.find('.'));
  for (auto own : kOwnBodyKeys) {
    if (first == own) return "'" + std::string(own) + "' is a member convoy writes itself";
  }
  return "";
}

// Dynamo's mode's own places, for the overlap check (auto may become bind or header).
std::vector<std::pair<RoutingWrite, std::string>> dynamo_places(
    const proto::SessionRoutingSettings& r) {
  std::vector<std::pair<RoutingWrite, std::string>> out;
  const std::string who = "mode " + std::string(to_string(r.mode));
  const bool header = r.mode == SessionRoutingMode::kHeader || r.mode == SessionRoutingMode::kAuto;
  const bool body = r.mode != SessionRoutingMode::kOff && r.mode != SessionRoutingMode::kHeader;
  if (header) {
    for (const std::string& name : {r.header_name, std::string("X-Dynamo-Parent-Session-ID"),
                                    std::string("X-Dynamo-Session-Final")}) {
      out.push_back({{true, name, RoutingSource::kSession}, who});
    }
  }
  if (body) out.push_back({{false, "nvext.session_control", RoutingSource::kSession}, who});
  return out;
}

std::optional<RoutingSource> custom_source(std::string_view text) {
  for (size_t i = 0; i + 1 < proto::kRoutingSourceNames.size(); ++i) {  // dp_rank: preset only
    if (proto::kRoutingSourceNames[i] == text) return static_cast<RoutingSource>(i);
  }
  return std::nullopt;
}

void read_custom_map(const yaml_util::Section& custom, std::string_view key, bool header,
                     std::map<std::string, RoutingSource>& out) {
  const YAML::Node n = custom.node(key);
  if (!n.IsDefined() || n.IsNull()) return;
  const yaml_util::Source& src = custom.source();
  const std::string path = custom.path(key);
  if (!n.IsMap())
    src.fail(path, "expected a mapping of NAME: SOURCE, got " + yaml_util::describe(n));
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
    const std::string item = path + "." + name;
    if (header && !is_token(name)) src.fail(item, "not a valid HTTP header name: '" + name + "'");
    if (!header) {
      if (auto why = path_problem(name); !why.empty()) src.fail(item, why);
    }
    const auto source = it->second.IsScalar() ? custom_source(it->second.Scalar()) : std::nullopt;
    if (!source) {
      src.fail(item, "expected a SOURCE: session, parent, root or url_index, got " +
                         yaml_util::describe(it->second));
    }
    out[name] = *source;
  }
}

void read_mode_list(const yaml_util::Section& s, proto::SessionRoutingSettings& r) {
  const YAML::Node n = s.node("mode");
  if (!n.IsDefined()) return;
  const std::string path = s.path("mode");
  std::vector<YAML::Node> items;
  if (n.IsSequence()) {
    for (const auto& item : n) items.push_back(item);
    if (items.empty()) s.source().fail(path, "the list is empty (use off)");
  } else {
    items.push_back(n);
  }
  std::vector<std::string_view> all(proto::kSessionRoutingModeNames.begin(),
                                    proto::kSessionRoutingModeNames.end());
  all.insert(all.end(), proto::kRouterPresetNames.begin(), proto::kRouterPresetNames.end());
  r.presets.clear();
  std::optional<SessionRoutingMode> dynamo;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string name = items[i].IsScalar() ? items[i].Scalar() : "";
    const auto at = std::find(all.begin(), all.end(), name);
    if (at == all.end()) {
      std::string allowed;
      for (auto a : all) allowed += (allowed.empty() ? "" : ", ") + std::string(a);
      std::string what = "expected one of " + allowed + " (or a list of them), got " +
                         yaml_util::describe(items[i]);
      if (auto near = closest_match(name, all)) what += "; did you mean '" + *near + "'?";
      s.source().fail(path, what);
    }
    const size_t index = static_cast<size_t>(at - all.begin());
    if (index < proto::kSessionRoutingModeNames.size()) {
      const auto mode = static_cast<SessionRoutingMode>(index);
      if (dynamo || (mode == SessionRoutingMode::kOff && items.size() > 1)) {
        s.source().fail(path,
                        "at most one of Dynamo's modes (bind, legacy, header, auto), and "
                        "off only alone, got " +
                            name + " in a list");
      }
      dynamo = mode;
      continue;
    }
    const auto preset = static_cast<RouterPreset>(index - proto::kSessionRoutingModeNames.size());
    if (std::find(r.presets.begin(), r.presets.end(), preset) != r.presets.end()) {
      s.source().fail(path, name + " is listed twice");
    }
    r.presets.push_back(preset);
  }
  r.mode = dynamo.value_or(SessionRoutingMode::kOff);
}

bool lists_preset(const proto::SessionRoutingSettings& r, RouterPreset p) {
  return std::find(r.presets.begin(), r.presets.end(), p) != r.presets.end();
}

// r.writes from the presets and the custom maps; throws where two modes write one place.
void resolve_writes(const yaml_util::Section& s, proto::SessionRoutingSettings& r) {
  std::vector<std::pair<RoutingWrite, std::string>> placed = dynamo_places(r);
  r.writes.clear();
  auto add = [&](RoutingWrite w, const std::string& who, const std::string& path) {
    for (const auto& [other, other_who] : placed) {
      if (!same_place(w, other)) continue;
      s.source().fail(path, who + " and " + other_who + " both write " +
                                (w.header ? "the header " : "the body path ") + w.name +
                                ": routing modes must write different places");
    }
    placed.push_back({w, who});
    r.writes.push_back(std::move(w));
  };
  const std::string mode_path = s.path("mode");
  for (RouterPreset p : r.presets) {
    const std::string who(proto::kRouterPresetNames[static_cast<size_t>(p)]);
    if (p == RouterPreset::kSglangGateway) {
      add({true, kSmgRoutingKeyHeader, RoutingSource::kSession}, who, mode_path);
    } else if (p == RouterPreset::kSglangSession) {
      add({false, kSglangSessionPath, RoutingSource::kSession}, who, mode_path);
    } else if (p == RouterPreset::kVllmDpRank) {
      add({true, kVllmDpRankHeader, RoutingSource::kDpRank}, who, mode_path);
    }
  }
  if (!lists_preset(r, RouterPreset::kCustom)) return;
  for (const auto& [name, source] : r.custom_headers) {
    add({true, name, source}, "custom", s.path("custom") + ".headers." + name);
  }
  for (const auto& [name, source] : r.custom_body) {
    add({false, name, source}, "custom", s.path("custom") + ".body." + name);
  }
}

}  // namespace

void read_routing_modes(const yaml_util::Section& s, proto::SessionRoutingSettings& r) {
  read_mode_list(s, r);
  if (s.present("custom") && !s.node("custom").IsNull()) {
    const yaml_util::Section custom = s.section("custom", kCustomKeys);
    r.custom_headers.clear();
    r.custom_body.clear();
    read_custom_map(custom, "headers", true, r.custom_headers);
    read_custom_map(custom, "body", false, r.custom_body);
  }
  const bool custom = lists_preset(r, RouterPreset::kCustom);
  const bool any_custom = !r.custom_headers.empty() || !r.custom_body.empty();
  s.check(!custom || any_custom, "custom",
          "mode custom needs at least one entry in custom.headers or custom.body");
  s.check(custom || !any_custom, "custom",
          "read only with mode custom: add custom to session_routing.mode");
  s.read("dp_ranks", r.dp_ranks);
  const bool dp = lists_preset(r, RouterPreset::kVllmDpRank);
  s.check(!dp || r.dp_ranks >= 1, "dp_ranks",
          "mode vllm_dp_rank needs the server's data-parallel size (an integer >= 1), got " +
              std::to_string(r.dp_ranks));
  s.check(dp || r.dp_ranks == 0, "dp_ranks", "read only with mode vllm_dp_rank");
  resolve_writes(s, r);
}

std::string routing_mode_yaml(const proto::SessionRoutingSettings& r) {
  if (r.presets.empty()) return std::string(to_string(r.mode));
  std::string list = "[";
  if (r.mode != SessionRoutingMode::kOff) list += std::string(to_string(r.mode)) + ", ";
  for (size_t i = 0; i < r.presets.size(); ++i) {
    list +=
        (i ? ", " : "") + std::string(proto::kRouterPresetNames[static_cast<size_t>(r.presets[i])]);
  }
  return list + "]";
}

std::string routing_custom_yaml(const proto::SessionRoutingSettings& r) {
  std::string y;
  if (r.custom_headers.empty() && r.custom_body.empty()) {
    y += "  custom: null\n";
  } else {
    y += "  custom:\n";
    auto map = [&](const char* key, const std::map<std::string, RoutingSource>& m) {
      y += std::string("    ") + key + ":" + (m.empty() ? " {}" : "") + "\n";
      for (const auto& [name, source] : m) {
        y += "      " + yaml_util::quote(name) + ": " +
             std::string(proto::kRoutingSourceNames[static_cast<size_t>(source)]) + "\n";
      }
    };
    map("headers", r.custom_headers);
    map("body", r.custom_body);
  }
  y += "  dp_ranks: " + std::to_string(r.dp_ranks) + "\n";
  return y;
}

}  // namespace convoy
