// The session headers of Dynamo's agent-aware frontends (X-Dynamo-Session-ID and the
// agent-native families), read as Dynamo's frontend reads them. Pure: the caller passes a header
// lookup.
//
// Source: ai-dynamo/dynamo lib/llm/src/protocols/agents.rs (agent_context_header_values,
// session_affinity_header_value, borrowed_header_value), PRs #10875 (header-based session
// affinity) and #14521/#14570 (the header family, session-final):
//   - every value is trimmed (Rust's str::trim) and an empty value counts as absent; a value
//     that is not visible ASCII (HeaderValue::to_str fails) counts as absent too;
//   - X-Dynamo-Session-ID wins over every agent-native header; its parent is
//     X-Dynamo-Parent-Session-ID, dropped when equal to the session id;
//   - otherwise the first agent mapping whose root header is present names the session, in
//     Dynamo's order: Claude Code (x-claude-code-session-id; a sub-agent's
//     x-claude-code-agent-id is the session and the root is its parent unless
//     x-claude-code-parent-agent-id names another), Codex (thread-id /
//     x-codex-parent-thread-id), DeepSeek harness (x-deepseek-harness-session-id /
//     x-deepseek-harness-parent-session-id), OpenCode (x-session-id / x-parent-session-id);
//   - X-Dynamo-Session-Final is parsed as dynamo_runtime::config::parse_bool_opt does (1, true,
//     on, yes / 0, false, off, no, any case; anything else: absent). Nothing in Dynamo's router
//     consumes it (PR #14570 review R1-80): it frees no binding.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace convoy::mock {

// Header names, lower case (HTTP header names are case-insensitive).
inline constexpr std::string_view kDynamoSessionId = "x-dynamo-session-id";
inline constexpr std::string_view kDynamoParentSessionId = "x-dynamo-parent-session-id";
inline constexpr std::string_view kDynamoSessionFinal = "x-dynamo-session-final";

struct SessionHeaders {
  std::string session_id;  // "" = the request names no session
  std::optional<std::string> parent_session_id;
  std::optional<bool> session_final;
  std::string_view source;  // the header that named the session ("" when none)
};

// `header(name)` returns the raw value of header `name` (lower case), or nullopt when absent.
using HeaderLookup = std::function<std::optional<std::string_view>(std::string_view)>;

SessionHeaders read_session_headers(const HeaderLookup& header);

// parse_bool_opt of Dynamo's runtime config: nullopt for empty or unrecognised values.
std::optional<bool> parse_bool_opt(std::string_view value);

}  // namespace convoy::mock
