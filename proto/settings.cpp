// Names of the settings enums (proto/messages.hpp): one table each, read both ways.
#include <cstddef>

#include "proto/messages.hpp"

namespace convoy::proto {

namespace {

template <class E, std::size_t N>
std::string_view name_of(E v, const std::array<std::string_view, N>& names) {
  const auto i = static_cast<std::size_t>(v);
  return i < N ? names[i] : std::string_view("unknown");
}

template <class E, std::size_t N>
std::optional<E> parse_name(std::string_view text, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Endpoint v) { return name_of(v, kEndpointNames); }
std::string_view to_string(ResponsesState v) { return name_of(v, kResponsesStateNames); }
std::string_view to_string(SessionRoutingMode v) { return name_of(v, kSessionRoutingModeNames); }
std::string_view to_string(HistoryMode v) { return name_of(v, kHistoryModeNames); }
std::string_view to_string(SessionAction v) { return name_of(v, kSessionActionNames); }
std::string_view to_string(FinalMarker v) { return name_of(v, kFinalMarkerNames); }

std::optional<Endpoint> parse_endpoint(std::string_view text) {
  return parse_name<Endpoint>(text, kEndpointNames);
}
std::optional<ResponsesState> parse_responses_state(std::string_view text) {
  return parse_name<ResponsesState>(text, kResponsesStateNames);
}
std::optional<SessionRoutingMode> parse_session_routing_mode(std::string_view text) {
  return parse_name<SessionRoutingMode>(text, kSessionRoutingModeNames);
}
std::optional<HistoryMode> parse_history_mode(std::string_view text) {
  return parse_name<HistoryMode>(text, kHistoryModeNames);
}
std::optional<SessionAction> parse_session_action(std::string_view text) {
  return parse_name<SessionAction>(text, kSessionActionNames);
}
std::optional<FinalMarker> parse_final_marker(std::string_view text) {
  return parse_name<FinalMarker>(text, kFinalMarkerNames);
}

}  // namespace convoy::proto
