// session_routing.mode auto: before any traffic, one minimal request that
// carries a body `bind` tells which of Dynamo's session-routing contracts the target speaks, and
// the whole run goes in that mode:
//   2xx                                        -> bind   (a frontend that knows bind)
//   400 "unknown variant `bind`"               -> legacy (v1.1/v1.2: open/close only)
//   400 "unknown field `session_control`"      -> header (v1.3 and later: X-Dynamo-Session-ID)
//   anything else (or no answer)               -> the run exits 3, the answer quoted, nothing
//                                                 else sent.
// A 2xx probe bound a session of its own; one more request closes it. The classification and
// the bodies are pure; post_probe() is the only I/O (a blocking libcurl POST, bounded in time,
// at start-up before any worker exists).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "controller/config/config.hpp"
#include "controller/report/session_ledger.hpp"

namespace convoy::controller {

// Dynamo's serde texts (ai-dynamo/dynamo: the nvext SessionControl action enum of v1.1/v1.2;
// NvExt's deny_unknown_fields from v1.3 on), as the 400 body quotes them.
inline constexpr std::string_view kUnknownVariantBind = "unknown variant `bind`";
inline constexpr std::string_view kUnknownFieldSessionControl = "unknown field `session_control`";

struct ProbeAnswer {
  int64_t http_status = 0;      // 0: no HTTP answer
  std::string body;             // as received (bounded)
  std::string transport_error;  // curl's text when there was no answer
};

struct Detection {
  bool ok = false;
  proto::SessionRoutingMode mode = proto::SessionRoutingMode::kOff;  // when ok
  std::string meaning;  // what the answer meant, or why it decides nothing
};

Detection classify_session_probe(const ProbeAnswer& answer);

// The probe's body: target.extra_body, then model, one short user message (chat) or prompt
// (completions), one output token, no streaming, and nvext.session_control {session_id,
// action, timeout} (other nvext keys kept). `action` is "bind" or "close" (close: no timeout).
std::string session_probe_body(const proto::TargetSettings& target, const std::string& session_id,
                               std::string_view action, int64_t timeout_s);

// POSTs `body` to `url` with target.headers and the API key (from target.api_key_env in this
// process's environment), within timeout_s.
ProbeAnswer post_probe(const proto::TargetSettings& target, const std::string& url,
                       const std::string& body, double timeout_s);

// The route of target.endpoint under a base url (the worker's rule: a base ending in /v1 gets
// no second one).
std::string probe_endpoint_url(const std::string& base_url, proto::Endpoint endpoint);

// Resolves session_routing before any traffic: records the mode configured, turns auto into the
// mode learned from every URL in `base_urls` (all must agree) and embeddings into off (nothing
// is overlaid there), and says whether the mode has releases to count. Returns "" or the line
// to print before exiting 3 (nothing else was sent).
std::string resolve_session_routing(Config& config, const std::vector<std::string>& base_urls,
                                    SessionLedger& ledger);

}  // namespace convoy::controller
