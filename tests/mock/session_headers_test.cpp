// How the mock reads Dynamo's session headers: the precedence,
// trimming and parent rules of Dynamo's lib/llm/src/protocols/agents.rs, as pure functions.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "mock/session_headers.hpp"

namespace convoy::mock {
namespace {

SessionHeaders read(const std::map<std::string, std::string>& headers) {
  return read_session_headers([&](std::string_view name) -> std::optional<std::string_view> {
    const auto it = headers.find(std::string(name));
    if (it == headers.end()) return std::nullopt;
    return std::string_view(it->second);
  });
}

TEST_CASE("session headers: X-Dynamo-Session-ID wins over agent-native headers") {
  const auto h = read({{"x-dynamo-session-id", "dyn-1"},
                       {"x-claude-code-session-id", "claude-1"},
                       {"thread-id", "codex-1"},
                       {"x-session-id", "opencode-1"},
                       {"x-parent-session-id", "opencode-parent"}});
  CHECK(h.session_id == "dyn-1");
  CHECK(h.source == kDynamoSessionId);
  // The agent's parent header does not apply to the Dynamo session.
  CHECK_FALSE(h.parent_session_id.has_value());

  // Without the Dynamo header the first agent mapping in Dynamo's order names the session.
  CHECK(read({{"thread-id", "codex-1"}, {"x-session-id", "opencode-1"}}).session_id == "codex-1");
  CHECK(read({{"x-session-id", "opencode-1"}}).session_id == "opencode-1");
  CHECK(read({}).session_id.empty());
}

TEST_CASE("session headers: values are trimmed and blank or non-ASCII values are absent") {
  CHECK(read({{"x-dynamo-session-id", "  s-1\t"}}).session_id == "s-1");
  // A blank Dynamo header counts as absent, so the agent header takes over.
  CHECK(read({{"x-dynamo-session-id", "   "}, {"x-session-id", " oc "}}).session_id == "oc");
  // HeaderValue::to_str fails on bytes outside visible ASCII: treated as absent.
  CHECK(read({{"x-dynamo-session-id", "caf\xc3\xa9"}}).session_id.empty());
  CHECK(read({{"x-dynamo-session-id", "s"}, {"x-dynamo-parent-session-id", " p "}})
            .parent_session_id == std::optional<std::string>("p"));
}

TEST_CASE("session headers: a parent equal to the session id is dropped") {
  CHECK_FALSE(read({{"x-dynamo-session-id", "s-1"}, {"x-dynamo-parent-session-id", " s-1 "}})
                  .parent_session_id.has_value());
  CHECK(read({{"x-dynamo-session-id", "child"}, {"x-dynamo-parent-session-id", "lead"}})
            .parent_session_id == std::optional<std::string>("lead"));
  CHECK_FALSE(
      read({{"x-session-id", "a"}, {"x-parent-session-id", "a"}}).parent_session_id.has_value());
}

TEST_CASE("session headers: a Claude Code sub-agent is its own session with the root as parent") {
  // A sub-agent: the agent id is the session, the root session its parent.
  auto h = read({{"x-claude-code-session-id", "root"}, {"x-claude-code-agent-id", "agent-7"}});
  CHECK(h.session_id == "agent-7");
  CHECK(h.parent_session_id == std::optional<std::string>("root"));
  // An explicit parent agent wins over the inferred root.
  h = read({{"x-claude-code-session-id", "root"},
            {"x-claude-code-agent-id", "agent-8"},
            {"x-claude-code-parent-agent-id", "agent-7"}});
  CHECK(h.parent_session_id == std::optional<std::string>("agent-7"));
  // The lead itself has no parent, even when a parent-agent header is sent.
  h = read({{"x-claude-code-session-id", "root"}, {"x-claude-code-parent-agent-id", "other"}});
  CHECK(h.session_id == "root");
  CHECK_FALSE(h.parent_session_id.has_value());
}

TEST_CASE("session headers: X-Dynamo-Session-Final parses as Dynamo's parse_bool_opt") {
  for (const char* yes : {"true", "TRUE", " yes ", "1", "On"}) {
    CHECK(read({{"x-dynamo-session-final", yes}}).session_final == std::optional<bool>(true));
  }
  for (const char* no : {"false", "0", "off", "No"}) {
    CHECK(read({{"x-dynamo-session-final", no}}).session_final == std::optional<bool>(false));
  }
  for (const char* neither : {"", "  ", "2", "y", "final"}) {
    CHECK_FALSE(read({{"x-dynamo-session-final", neither}}).session_final.has_value());
  }
}

}  // namespace
}  // namespace convoy::mock
