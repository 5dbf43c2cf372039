#include "controller/cli/cli_aliases.hpp"

#include <cstdint>
#include <limits>

namespace convoy::controller {

namespace {

// A whole number > 0 that fits int64, digits only.
std::optional<int64_t> parse_positive_whole(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const int64_t digit = c - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (value <= 0) return std::nullopt;
  return value;
}

}  // namespace

AliasResult translate_aliases(bool use_conv_aware_routing, bool use_legacy_session_control,
                              std::optional<std::string> timeout_seconds_text) {
  AliasResult result;
  if (use_legacy_session_control) {
    result.overrides.push_back("session_routing.mode=legacy");
  } else if (use_conv_aware_routing) {
    result.overrides.push_back("session_routing.mode=auto");
  }
  if (timeout_seconds_text) {
    auto seconds = parse_positive_whole(*timeout_seconds_text);
    if (!seconds) {
      result.overrides.clear();
      result.error = std::string(kFlagTimeout) +
                     ": expected a whole number of seconds > 0, got \"" + *timeout_seconds_text +
                     "\"";
      return result;
    }
    result.overrides.push_back("session_routing.timeout_s=" + std::to_string(*seconds));
  }
  return result;
}

}  // namespace convoy::controller
