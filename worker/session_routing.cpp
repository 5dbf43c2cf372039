#include "worker/session_routing.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/hash.hpp"

namespace convoy::worker {

std::string session_control_json(const SessionControl& control) {
  if (!control.present()) return "";
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("session_id");
  writer.String(control.session_id.data(),
                static_cast<rapidjson::SizeType>(control.session_id.size()));
  if (control.action != SessionAction::kBare) {
    const std::string_view action = proto::to_string(control.action);
    writer.Key("action");
    writer.String(action.data(), static_cast<rapidjson::SizeType>(action.size()));
  }
  if (control.timeout_s > 0) {
    writer.Key("timeout");
    writer.Int64(control.timeout_s);
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

namespace {

// timeout_s 0: the request carries no timeout (a close, a bare legacy request).
SessionOverlay with_control(const std::string& id, SessionAction action, int64_t timeout_s) {
  SessionOverlay overlay;
  overlay.session_control = SessionControl{id, action, timeout_s, {}};
  overlay.session_control_json = session_control_json(*overlay.session_control);
  return overlay;
}

}  // namespace

std::optional<SessionRoutingSettings> session_routing_settings(const proto::WorkerSettings& s,
                                                               std::string* error) {
  auto fail = [&](std::string message) -> std::optional<SessionRoutingSettings> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  const SessionRoutingSettings& out = s.session_routing;
  if (out.timeout_s <= 0) {
    return fail("session_routing.timeout_s: must be a whole number of seconds > 0, got " +
                std::to_string(out.timeout_s));
  }
  if (out.mode == SessionRoutingMode::kHeader && out.header_name.empty()) {
    return fail("session_routing.header_name: must not be empty in header mode");
  }
  return out;
}

namespace {

SessionOverlay header_overlay(const SessionRoutingSettings& settings,
                              const std::string& correlation_id,
                              std::string_view parent_correlation_id, bool session_final) {
  SessionOverlay overlay;
  overlay.headers.emplace_back(settings.header_name, correlation_id);
  if (!parent_correlation_id.empty() && parent_correlation_id != correlation_id) {
    overlay.headers.emplace_back(kParentSessionHeader, parent_correlation_id);
  }
  if (session_final) overlay.headers.emplace_back(kSessionFinalHeader, "true");
  return overlay;
}

}  // namespace

SessionOverlay plan_session_overlay(const SessionRoutingSettings& settings,
                                    const std::string& correlation_id, bool final_turn,
                                    bool first_request_on_this_worker_for_session,
                                    std::string_view parent_correlation_id) {
  switch (settings.mode) {
    case SessionRoutingMode::kOff:
    case SessionRoutingMode::kAuto:  // resolved by the controller; never reaches a worker
      return {};
    case SessionRoutingMode::kHeader:
      return header_overlay(settings, correlation_id, parent_correlation_id,
                            final_turn && settings.final_marker == proto::FinalMarker::kLastTurn);
    case SessionRoutingMode::kBind:
      if (final_turn) return with_control(correlation_id, SessionAction::kClose, 0);
      return with_control(correlation_id, SessionAction::kBind, settings.timeout_s);
    case SessionRoutingMode::kLegacy:
      if (final_turn) return with_control(correlation_id, SessionAction::kClose, 0);
      if (first_request_on_this_worker_for_session) {
        return with_control(correlation_id, SessionAction::kOpen, settings.timeout_s);
      }
      return with_control(correlation_id, SessionAction::kBare, 0);
  }
  return {};
}

bool sends_close_request(const SessionRoutingSettings& settings) {
  return settings.mode == SessionRoutingMode::kHeader &&
         settings.final_marker == proto::FinalMarker::kCloseRequest;
}

SessionOverlay plan_close_request_overlay(const SessionRoutingSettings& settings,
                                          const std::string& correlation_id,
                                          std::string_view parent_correlation_id) {
  if (!sends_close_request(settings)) return {};
  return header_overlay(settings, correlation_id, parent_correlation_id, true);
}

bool SessionOverlay::may_open_session() const {
  if (session_control) {
    return session_control->action == SessionAction::kBind ||
           session_control->action == SessionAction::kOpen;
  }
  return !headers.empty();
}

bool SessionOverlay::ends_session() const {
  if (session_control) return session_control->action == SessionAction::kClose;
  for (const auto& [name, value] : headers) {
    if (name == kSessionFinalHeader) return true;
  }
  return false;
}

bool releases_sessions(const SessionRoutingSettings& settings) {
  return settings.mode == SessionRoutingMode::kBind ||
         settings.mode == SessionRoutingMode::kLegacy || sends_close_request(settings);
}

SessionOverlay plan_release_overlay(const SessionRoutingSettings& settings,
                                    const std::string& correlation_id,
                                    std::string_view parent_correlation_id) {
  if (settings.mode == SessionRoutingMode::kBind || settings.mode == SessionRoutingMode::kLegacy) {
    return with_control(correlation_id, SessionAction::kClose, 0);
  }
  return plan_close_request_overlay(settings, correlation_id, parent_correlation_id);
}

SessionOverlay SessionRouter::prepare(const std::string& correlation_id, bool final_turn,
                                      std::string_view parent_correlation_id) {
  if (settings_.mode != SessionRoutingMode::kLegacy) {
    return plan_session_overlay(settings_, correlation_id, final_turn, false,
                                parent_correlation_id);
  }
  SessionOverlay overlay = plan_session_overlay(settings_, correlation_id, final_turn,
                                                tracker_.should_open(correlation_id));
  if (final_turn) {
    tracker_.remove_on_final(correlation_id);
  } else if (overlay.opens_session()) {
    tracker_.mark_opened(correlation_id);
  }
  return overlay;
}

void SessionRouter::on_failed_before_server(const std::string& correlation_id,
                                            const SessionOverlay& sent) {
  if (sent.opens_session()) tracker_.rollback(correlation_id);
}

void SessionRouter::on_conversation_end(const std::string& correlation_id,
                                        bool completed_normally) {
  // A normal end already removed the id when close was prepared; discarding again is a no-op.
  // Every other end (cancelled, aborted, stopped, re-homed) must drop it here.
  static_cast<void>(completed_normally);
  tracker_.discard(correlation_id);
}

}  // namespace convoy::worker

namespace convoy::worker {

int64_t family_dp_rank(std::string_view root, int64_t dp_ranks) {
  if (dp_ranks < 1) return 0;
  return static_cast<int64_t>(fnv1a64(root) % static_cast<uint64_t>(dp_ranks));
}

void add_routing_writes(SessionOverlay& overlay, const SessionRoutingSettings& settings,
                        const RoutingIds& ids) {
  for (const proto::RoutingWrite& w : settings.writes) {
    std::string value;
    bool number = false;
    switch (w.source) {
      case proto::RoutingSource::kSession:
        value = std::string(ids.session);
        break;
      case proto::RoutingSource::kParent:
        if (ids.parent.empty()) continue;  // a lead has none
        value = std::string(ids.parent);
        break;
      case proto::RoutingSource::kRoot:
        value = std::string(ids.root);
        break;
      case proto::RoutingSource::kUrlIndex:
        value = std::to_string(ids.url_index);
        number = true;
        break;
      case proto::RoutingSource::kDpRank:
        value = std::to_string(family_dp_rank(ids.root, settings.dp_ranks));
        number = true;
        break;
    }
    if (w.header) {
      overlay.key_headers.emplace_back(w.name, std::move(value));
    } else {
      overlay.key_body.push_back({w.name, std::move(value), number});
    }
  }
}

void set_body_fields(rapidjson::Document& body, const std::vector<RoutingBodyField>& fields) {
  if (!body.IsObject()) return;
  auto& a = body.GetAllocator();
  for (const RoutingBodyField& f : fields) {
    rapidjson::Value* at = &body;
    std::string_view rest = f.path;
    while (true) {
      const size_t dot = rest.find('.');
      const std::string_view key = rest.substr(0, dot);
      auto it = at->FindMember(rapidjson::Value(
          rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size()))));
      if (it == at->MemberEnd()) {
        at->AddMember(rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), a),
                      rapidjson::Value(rapidjson::kObjectType), a);
        it = at->MemberEnd() - 1;
      }
      if (dot == std::string_view::npos) {
        if (f.number) {
          it->value.SetInt64(std::stoll(f.value));
        } else {
          it->value.SetString(f.value.data(), static_cast<rapidjson::SizeType>(f.value.size()), a);
        }
        break;
      }
      if (!it->value.IsObject()) it->value.SetObject();
      at = &it->value;
      rest = rest.substr(dot + 1);
    }
  }
}

}  // namespace convoy::worker
