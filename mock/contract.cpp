#include "mock/contract.hpp"

#include <rapidjson/reader.h>

#include <algorithm>
#include <array>
#include <vector>

namespace convoy::mock {

const char* to_string(SessionAction action) {
  switch (action) {
    case SessionAction::kNone:
      return "none";
    case SessionAction::kBare:
      return "bare";
    case SessionAction::kOpen:
      return "open";
    case SessionAction::kBind:
      return "bind";
    case SessionAction::kClose:
      return "close";
  }
  return "?";
}

namespace {

// A NUL-terminated input stream. Unlike rapidjson::StringStream it is not copied into the
// reader's locals while a token is read, so Tell() is exact inside handler callbacks.
struct TrackingStream {
  using Ch = char;
  explicit TrackingStream(const char* text) : begin(text), cur(text) {}
  Ch Peek() const { return *cur; }
  Ch Take() { return *cur++; }
  size_t Tell() const { return static_cast<size_t>(cur - begin); }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }

  const char* begin;
  const char* cur;
};

// SAX handler that records the stream offset where a path's key or value ends.
class PathLocator : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, PathLocator> {
 public:
  PathLocator(const TrackingStream& stream, std::vector<std::string_view> target, bool key_only)
      : stream_(stream), target_(std::move(target)), key_only_(key_only) {}

  bool Default() { return value_done(); }
  bool String(const char*, rapidjson::SizeType, bool) { return value_done(); }
  bool StartObject() {
    frames_.push_back({true, {}});
    return true;
  }
  bool Key(const char* str, rapidjson::SizeType length, bool) {
    frames_.back().key.assign(str, length);
    if (key_only_ && at_target()) return found(stream_.Tell());
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    frames_.pop_back();
    return value_done();
  }
  bool StartArray() {
    frames_.push_back({false, {}});
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    frames_.pop_back();
    return value_done();
  }

  std::optional<size_t> offset() const { return offset_; }

 private:
  struct Frame {
    bool object;
    std::string key;
  };

  bool at_target() const {
    if (frames_.size() != target_.size()) return false;
    for (size_t i = 0; i < frames_.size(); ++i) {
      if (!frames_[i].object || frames_[i].key != target_[i]) return false;
    }
    return true;
  }
  bool value_done() {
    if (!key_only_ && at_target()) return found(stream_.Tell());
    return true;
  }
  bool found(size_t offset) {
    offset_ = offset;
    return false;  // stop parsing
  }

  const TrackingStream& stream_;
  std::vector<std::string_view> target_;
  bool key_only_;
  std::vector<Frame> frames_;
  std::optional<size_t> offset_;
};

std::string position_text(std::string_view body, size_t offset) {
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < body.size(); ++i) {
    if (body[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "at line " + std::to_string(line) + " column " + std::to_string(offset - line_start);
}

ApiError deserialize_error(std::string_view path, const std::string& what, std::string_view body,
                           std::initializer_list<std::string_view> locate, bool key_only) {
  std::string message(kDeserializePrefix);
  if (!path.empty()) {  // 1.6.x reads nvext through a flattened struct: no path in its errors
    message.append(path);
    message.append(": ");
  }
  message.append(what);
  message.push_back(' ');
  message.append(json_position(body, locate, key_only));
  return bad_request(std::move(message));
}

std::string quoted_list(std::initializer_list<std::string_view> names) {
  std::string out;
  size_t i = 0;
  for (const auto name : names) {
    if (i > 0) out += (names.size() == 2 ? " or " : ", ");
    out += "`" + std::string(name) + "`";
    ++i;
  }
  return out;
}

std::variant<SessionDirective, ApiError> read_fields(
    const rapidjson::Value& control, std::string_view body,
    std::initializer_list<std::string_view> allowed) {
  if (!control.IsObject()) {
    return deserialize_error("nvext.session_control",
                             "invalid type: expected struct SessionControl", body,
                             {"nvext", "session_control"}, false);
  }
  SessionDirective directive;
  directive.action = SessionAction::kBare;
  const auto action = control.FindMember("action");
  if (action != control.MemberEnd() && !action->value.IsNull()) {
    const std::string expected = allowed.size() == 2 ? "expected " + quoted_list(allowed)
                                                     : "expected one of " + quoted_list(allowed);
    if (!action->value.IsString()) {
      return deserialize_error("nvext.session_control.action",
                               "invalid type: expected a string variant, " + expected, body,
                               {"nvext", "session_control", "action"}, false);
    }
    const std::string_view name(action->value.GetString(), action->value.GetStringLength());
    bool known = false;
    for (const auto a : allowed) known = known || a == name;
    if (name == "open" && known) directive.action = SessionAction::kOpen;
    if (name == "bind" && known) directive.action = SessionAction::kBind;
    if (name == "close" && known) directive.action = SessionAction::kClose;
    if (!known) {
      return deserialize_error("nvext.session_control.action",
                               "unknown variant `" + std::string(name) + "`, " + expected, body,
                               {"nvext", "session_control", "action"}, false);
    }
  }
  const auto id = control.FindMember("session_id");
  if (id == control.MemberEnd() || !id->value.IsString()) {
    return deserialize_error("nvext.session_control", "missing field `session_id`", body,
                             {"nvext", "session_control"}, false);
  }
  directive.session_id.assign(id->value.GetString(), id->value.GetStringLength());
  const auto timeout = control.FindMember("timeout");
  if (timeout != control.MemberEnd() && timeout->value.IsNumber()) {
    directive.timeout_s = timeout->value.GetDouble();
  }
  return directive;
}

}  // namespace

std::string json_position(std::string_view raw_body, std::initializer_list<std::string_view> path,
                          bool key_only) {
  // RapidJSON's StringStream wants a NUL-terminated buffer.
  const std::string copy(raw_body);
  TrackingStream stream(copy.c_str());
  PathLocator locator(stream, std::vector<std::string_view>(path), key_only);
  rapidjson::Reader reader;
  reader.Parse(stream, locator);
  return position_text(raw_body, locator.offset().value_or(1));
}

namespace {

// The header era's NvExt fields, in the order the real 1.6.1 frontend lists them when it rejects
// an unknown one (measured: tests/dynamo/conformance_test.cpp). Any other key is a 400.
constexpr std::array<std::string_view, 17> kHeaderEraNvext = {
    "greed_sampling",  "use_raw_prompt",      "annotations",          "backend_instance_id",
    "token_data",      "max_thinking_tokens", "cache_salt",           "extra_fields",
    "metadata_upload", "prefill_worker_id",   "decode_worker_id",     "dp_rank",
    "prefill_dp_rank", "agent_hints",         "request_timestamp_ms", "routing_constraints",
    "router"};

std::optional<ApiError> unknown_nvext_field(const rapidjson::Value& nvext,
                                            std::string_view raw_body) {
  for (const auto& m : nvext.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    if (std::find(kHeaderEraNvext.begin(), kHeaderEraNvext.end(), name) != kHeaderEraNvext.end()) {
      continue;
    }
    std::string expected;
    for (const auto field : kHeaderEraNvext) {
      expected += (expected.empty() ? "`" : ", `") + std::string(field) + "`";
    }
    return deserialize_error(
        "", "unknown field `" + std::string(name) + "`, expected one of " + expected, raw_body,
        {"nvext", name}, true);
  }
  return std::nullopt;
}

}  // namespace

std::variant<SessionDirective, ApiError> read_session_control(Contract contract,
                                                              const rapidjson::Value& request,
                                                              std::string_view raw_body) {
  SessionDirective none;
  if (contract == Contract::kNone || !request.IsObject()) return none;
  const auto nvext = request.FindMember("nvext");
  if (nvext == request.MemberEnd() || !nvext->value.IsObject()) return none;
  if (contract == Contract::kHeader) {
    if (auto error = unknown_nvext_field(nvext->value, raw_body)) return *error;
    return none;
  }
  const auto control = nvext->value.FindMember("session_control");
  if (control == nvext->value.MemberEnd()) return none;

  switch (contract) {
    case Contract::kNone:
    case Contract::kHeader:
      return none;
    case Contract::kLegacy:
      if (control->value.IsNull()) return none;
      return read_fields(control->value, raw_body, {"open", "close"});
    case Contract::kBind:
      if (control->value.IsNull()) return none;
      return read_fields(control->value, raw_body, {"open", "bind", "close"});
  }
  return none;
}

}  // namespace convoy::mock
