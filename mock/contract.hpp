// Session-control contracts of Dynamo's generations, as pure functions.
//
// Each contract decides whether nvext.session_control is accepted and what it asks for; the
// engine then applies the directive to its pin table. Rejections reproduce the bodies of
// Dynamo's axum/serde frontend, including serde's "at line L column C" position: the column
// just past the offending token (the closing quote of the variant or key).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <rapidjson/document.h>

#include "mock/api_error.hpp"
#include "mock/options.hpp"

namespace convoy::mock {

enum class SessionAction {
  kNone,   // no session_control (or ignored by the contract)
  kBare,   // session_control without an action
  kOpen,   // legacy open
  kBind,   // bind: pin with TTL
  kClose,  // unpin
};

struct SessionDirective {
  SessionAction action = SessionAction::kNone;
  std::string session_id;
  std::optional<double> timeout_s;
};

// `request` is the parsed body, `raw_body` the bytes it was parsed from (for positions).
std::variant<SessionDirective, ApiError> read_session_control(Contract contract,
                                                              const rapidjson::Value& request,
                                                              std::string_view raw_body);

// serde_json's position of the end of the value (or, with `key_only`, of the key) found at
// `path` (object keys, e.g. {"nvext","session_control","action"}); "line 1 column 1" when
// absent.
std::string json_position(std::string_view raw_body, std::initializer_list<std::string_view> path,
                          bool key_only);

const char* to_string(SessionAction action);

}  // namespace convoy::mock
