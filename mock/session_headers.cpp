#include "mock/session_headers.hpp"

#include <algorithm>
#include <cctype>

namespace convoy::mock {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && is_space(v.front())) v.remove_prefix(1);
  while (!v.empty() && is_space(v.back())) v.remove_suffix(1);
  return v;
}

// axum's HeaderValue::to_str accepts visible ASCII and tabs only.
bool visible_ascii(std::string_view v) {
  return std::all_of(v.begin(), v.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u < 0x7f);
  });
}

// borrowed_header_value: present, to_str() succeeds, trimmed, non-empty.
std::optional<std::string_view> value(const HeaderLookup& header, std::string_view name) {
  const auto raw = header(name);
  if (!raw || !visible_ascii(*raw)) return std::nullopt;
  const auto v = trim(*raw);
  if (v.empty()) return std::nullopt;
  return v;
}

struct AgentMapping {
  std::string_view root;
  std::string_view child;   // "" = none
  std::string_view parent;  // "" = none
  bool infer_parent_from_session_for_child;
};

// AGENT_HEADER_MAPPINGS, in Dynamo's order.
constexpr AgentMapping kMappings[] = {
    {"x-claude-code-session-id", "x-claude-code-agent-id", "x-claude-code-parent-agent-id", true},
    {"thread-id", "", "x-codex-parent-thread-id", false},
    {"x-deepseek-harness-session-id", "", "x-deepseek-harness-parent-session-id", false},
    {"x-session-id", "", "x-parent-session-id", false},
};

}  // namespace

std::optional<bool> parse_bool_opt(std::string_view raw) {
  std::string v(trim(raw));
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  return std::nullopt;
}

SessionHeaders read_session_headers(const HeaderLookup& header) {
  SessionHeaders out;
  if (const auto final_value = value(header, kDynamoSessionFinal)) {
    out.session_final = parse_bool_opt(*final_value);
  }
  if (const auto session = value(header, kDynamoSessionId)) {
    out.session_id = std::string(*session);
    out.source = kDynamoSessionId;
    const auto parent = value(header, kDynamoParentSessionId);
    if (parent && *parent != *session) out.parent_session_id = std::string(*parent);
    return out;
  }
  for (const auto& m : kMappings) {
    const auto root = value(header, m.root);
    if (!root) continue;
    std::string_view session = *root;
    out.source = m.root;
    if (!m.child.empty()) {
      if (const auto child = value(header, m.child)) {
        session = *child;
        out.source = m.child;
      }
    }
    const bool is_child = session != *root;
    std::optional<std::string_view> parent;
    if (!m.parent.empty()) parent = value(header, m.parent);
    if (parent && *parent == session) parent.reset();
    if (parent && m.infer_parent_from_session_for_child && !is_child) parent.reset();
    if (!parent && m.infer_parent_from_session_for_child && is_child) parent = *root;
    out.session_id = std::string(session);
    if (parent) out.parent_session_id = std::string(*parent);
    return out;
  }
  return out;
}

}  // namespace convoy::mock
