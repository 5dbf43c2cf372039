// Dynamo conversation-aware routing (a conversation's turns go to the server worker that holds
// its KV cache): what each request of a conversation carries in nvext.session_control or in a
// header, and the per-worker legacy open-tracking set.
//
// The session id is the conversation's correlation id, identical on every turn. The policy is a
// pure function of the mode, the turn's position and whether this worker already opened the
// session; SessionRouter adds the open-tracking state the worker needs around it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "proto/messages.hpp"

namespace convoy::worker {

// The worker's view of session_routing.* is the wire struct itself (defaults written there).
using proto::SessionAction;
using proto::SessionRoutingMode;
using SessionRoutingSettings = proto::SessionRoutingSettings;

// Dynamo's header mode names, as its frontend reads them (ai-dynamo/dynamo
// lib/llm/src/protocols/agents.rs: HEADER_DYNAMO_SESSION_ID, HEADER_DYNAMO_PARENT_SESSION_ID,
// HEADER_DYNAMO_SESSION_FINAL; HTTP header names are case-insensitive). The session id header
// is session_routing.header_name (default X-Dynamo-Session-ID); these two are fixed. Dynamo drops
// a parent equal to the session id, so convoy never sends one, and it parses Session-Final with
// parse_bool ("true").
inline constexpr std::string_view kParentSessionHeader = "X-Dynamo-Parent-Session-ID";
inline constexpr std::string_view kSessionFinalHeader = "X-Dynamo-Session-Final";

// The Welcome's session_routing, checked. Returns nullopt and sets *error for a timeout <= 0 or
// an empty header name in header mode (an unknown mode cannot arrive: it does not decode).
std::optional<SessionRoutingSettings> session_routing_settings(const proto::WorkerSettings& s,
                                                               std::string* error);

// One nvext.session_control object (proto/messages.hpp): what a request carries, and what its
// record reports as sent.
using SessionControl = proto::SessionControl;
// Its JSON as convoy writes it (session_id, action, timeout; not the body's own keys); "" when
// !present().
std::string session_control_json(const SessionControl& control);

// One body field other routers read (session_routing.writes): a dot-separated path and its
// value, a JSON string unless `number`.
struct RoutingBodyField {
  std::string path;
  std::string value;
  bool number = false;  // url_index and dp_rank are integers
};

// What one request adds on top of its formatted body.
struct SessionOverlay {
  std::optional<SessionControl> session_control;  // put under nvext.session_control
  std::string session_control_json;               // the object above as JSON; "" when none
  std::vector<std::pair<std::string, std::string>> headers;  // extra HTTP headers (name, value)
  // Other routers' keys (session_routing.writes): sent, but no session lifecycle of Dynamo's,
  // so neither may_open_session nor ends_session reads them.
  std::vector<std::pair<std::string, std::string>> key_headers;
  std::vector<RoutingBodyField> key_body;

  bool empty() const { return !session_control && headers.empty(); }
  // True when this request carries legacy's "open" (the set was added to for it).
  bool opens_session() const {
    return session_control && session_control->action == SessionAction::kOpen;
  }
  // True when the server may hold a session for this request once it has reached it: a bind or
  // an open, or (header mode) the session header.
  bool may_open_session() const;
  // True when a 2xx answer to this request means the server let the session go: a close, or
  // (header mode) X-Dynamo-Session-Final.
  bool ends_session() const;
};

// The pure policy, by mode:
//   off:    nothing.
//   bind:   non-final {"session_id":ID,"action":"bind","timeout":T}; final
//           {"session_id":ID,"action":"close"}. A single-turn conversation sends only close.
//   legacy: the first request this worker sends for the conversation
//           {"session_id":ID,"action":"open","timeout":T} (whatever its turn index); later
//           non-final requests {"session_id":ID}; the final one {"session_id":ID,"action":"close"}.
//           When the first request is also the final one (single-turn conversations, or a
//           mid-conversation start at the last turn) only close is sent: an open would pin a
//           session that is released by the very same request.
//   header: no body field; the header `header_name: ID` on every request; on a sub-agent's
//           requests also X-Dynamo-Parent-Session-ID: PARENT (the parent's correlation id; never
//           sent when empty or equal to ID); with final_marker last_turn the final turn also
//           carries X-Dynamo-Session-Final: true. No trajectory headers, no nvext.agent_context.
// Every member of a sub-agent family has its own ID and so its own lifecycle in every mode (its
// own bind/close, its own legacy open and close); only header mode names the parent.
SessionOverlay plan_session_overlay(const SessionRoutingSettings& settings,
                                    const std::string& correlation_id, bool final_turn,
                                    bool first_request_on_this_worker_for_session,
                                    std::string_view parent_correlation_id = {});

// Who a request is, for session_routing.writes' sources.
struct RoutingIds {
  std::string_view session;  // the request's own correlation id
  std::string_view parent;   // its parent's ("" for a lead)
  std::string_view root;     // the family's lead
  uint32_t url_index = 0;    // the family's frontend
};

// A family's data-parallel rank for vllm_dp_rank: a hash of its root id modulo dp_ranks (0 when
// dp_ranks < 1), so every request of the family, sub-agents included, names one rank.
int64_t family_dp_rank(std::string_view root, int64_t dp_ranks);

// Adds settings.writes to `overlay`: each header as key_headers, each body path as key_body,
// valued by its source. A parent source writes nothing for a lead.
void add_routing_writes(SessionOverlay& overlay, const SessionRoutingSettings& settings,
                        const RoutingIds& ids);

// Writes `fields` into `body` (an object; anything else is left alone), creating objects along
// each path and replacing a non-object met on the way.
void set_body_fields(rapidjson::Document& body, const std::vector<RoutingBodyField>& fields);

// final_marker close_request (header mode only): the conversation ends with one extra one-token
// request carrying the session headers and X-Dynamo-Session-Final: true.
bool sends_close_request(const SessionRoutingSettings& settings);
// The overlay of that extra request (empty unless sends_close_request).
SessionOverlay plan_close_request_overlay(const SessionRoutingSettings& settings,
                                          const std::string& correlation_id,
                                          std::string_view parent_correlation_id = {});

// Whether the mode has a release the server acts on (bind and legacy close, header mode with
// final_marker close_request): then a conversation that ends early still gets it (else the
// server holds its session until the timeout), and each worker counts the sessions left open.
bool releases_sessions(const SessionRoutingSettings& settings);
// The release a conversation that ended early sends: bind/legacy {"session_id":ID,
// "action":"close"}; header mode with close_request the close request's headers. Empty when the
// mode has none.
SessionOverlay plan_release_overlay(const SessionRoutingSettings& settings,
                                    const std::string& correlation_id,
                                    std::string_view parent_correlation_id = {});

// The per-worker legacy open-tracking set (legacy mode sends open on the first request this
// worker sends for a conversation). It holds only the conversations this worker has opened and
// not yet ended, so its size is bounded by the conversations in flight.
// Every removal is idempotent and a no-op for unknown ids.
class LegacyOpenTracker {
 public:
  // True when the next request for `id` must carry open (this worker has not opened it).
  bool should_open(const std::string& id) const { return open_.count(id) == 0; }
  // The request carrying open is about to be sent.
  void mark_opened(const std::string& id) { open_.insert(id); }
  // That request failed before the server could have received it (dns, connect, send): the
  // session was never opened, so the next request for `id` opens again.
  void rollback(const std::string& id) { open_.erase(id); }
  // The final turn (close) was sent.
  void remove_on_final(const std::string& id) { open_.erase(id); }
  // The conversation ended any other way on this worker: cancellation, abort after an error, run
  // stop, worker shutdown, re-homing.
  void discard(const std::string& id) { open_.erase(id); }
  // Everything goes (worker shutdown).
  void clear() { open_.clear(); }
  size_t size() const { return open_.size(); }

 private:
  std::unordered_set<std::string> open_;
};

// Tracker + policy, as the worker uses them for every request of every conversation.
class SessionRouter {
 public:
  explicit SessionRouter(SessionRoutingSettings settings) : settings_(std::move(settings)) {}

  // The overlay for the next request of `correlation_id`. In legacy mode a returned open marks
  // the session opened and a final turn removes it from the set (close is being sent).
  // `parent_correlation_id`: a sub-agent's parent ("" for a lead); header mode sends it.
  SessionOverlay prepare(const std::string& correlation_id, bool final_turn,
                         std::string_view parent_correlation_id = {});
  // The request built with `sent` failed before the server could have received it (dns,
  // connect or send failure): an open it carried is rolled back so the next turn opens again.
  void on_failed_before_server(const std::string& correlation_id, const SessionOverlay& sent);
  // The conversation left this worker (completed, cancelled, aborted, stopped, re-homed).
  // Idempotent; after it the set no longer holds `correlation_id`.
  void on_conversation_end(const std::string& correlation_id, bool completed_normally);
  // Worker shutdown or run stop: forget every open session.
  void clear() { tracker_.clear(); }

  // The size of the legacy open-tracking set (heartbeats, summary.json).
  size_t legacy_open_count() const { return tracker_.size(); }
  const SessionRoutingSettings& settings() const { return settings_; }

 private:
  SessionRoutingSettings settings_;
  LegacyOpenTracker tracker_;
};

}  // namespace convoy::worker
