// AIPerf-compatible flags for Dynamo conversation-aware routing, as aliases of
// session_routing.* (so an AIPerf command line runs unchanged). A pure translation into --set style
// overrides; the CLI registers the flags with the help strings below and exits 2 on an error.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace convoy::controller {

inline constexpr const char kFlagConvAware[] = "--use-dynamo-conv-aware-routing";
// AIPerf's second spelling of the same flag (ai-dynamo/aiperf PR #1101): an alias, same meaning.
inline constexpr const char kFlagSessionControl[] = "--use-dynamo-session-control";
// Both spellings, as the CLI registers them (one flag, two names).
inline constexpr const char kFlagConvAwareNames[] =
    "--use-dynamo-conv-aware-routing,--use-dynamo-session-control";
inline constexpr const char kFlagLegacy[] = "--use-legacy-dynamo-session-control";
inline constexpr const char kFlagTimeout[] = "--dynamo-session-timeout-seconds";

inline constexpr const char kHelpConvAware[] =
    "Enable Dynamo conversation-aware routing in whatever form the target speaks: before any "
    "traffic one probe request learns it (bind, legacy open/close, or the X-Dynamo-Session-ID "
    "header of Dynamo v1.3 and later) and the whole run uses it, keyed by each conversation's "
    "X-Correlation-ID. Same as session_routing.mode=auto. --use-dynamo-session-control is the "
    "same flag (AIPerf's other spelling).";
inline constexpr const char kHelpLegacy[] =
    "Force the legacy wire format for Dynamo v1.1/v1.2 (open on the first request, bare "
    "session_id after, close on the last), with or without --use-dynamo-conv-aware-routing. "
    "Same as session_routing.mode=legacy.";
inline constexpr const char kHelpTimeout[] =
    "Session timeout in whole seconds sent as nvext.session_control.timeout with bind and open "
    "(default 300). Same as session_routing.timeout_s.";

struct AliasResult {
  // "key.path=value" overrides, applied like --set: session_routing.mode, session_routing.timeout_s
  std::vector<std::string> overrides;
  std::optional<std::string> error;  // set: bad usage; nothing else is meaningful
};

// use_conv_aware_routing alone -> mode auto (learned from the target's replies);
// use_legacy_session_control, alone or with it -> mode legacy. timeout_seconds_text, when
// given, must be a whole number > 0 (digits only).
AliasResult translate_aliases(bool use_conv_aware_routing, bool use_legacy_session_control,
                              std::optional<std::string> timeout_seconds_text);

}  // namespace convoy::controller
