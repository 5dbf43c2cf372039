#include "worker/conversation_runner.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/duration.hpp"
#include "common/hash.hpp"
#include "common/log.hpp"

namespace convoy::worker {

namespace {
// An early release is best effort and must not hold the worker's shutdown (5 s drain) up: it
// gets at most this long, whatever target.request_timeout_s says.
constexpr double kReleaseTimeoutS = 3;

// A member's place (conversation index, member) in one word, so that a callback capturing
// `this` and it fits std::function's inline buffer (16 bytes in libstdc++) and a timer or a
// request's completion costs no allocation. Indices too large to pack (never, in practice)
// capture both words instead.
constexpr unsigned kMemberBits = 16;
constexpr uint64_t kMemberMask = (uint64_t{1} << kMemberBits) - 1;
bool packable(uint64_t index, size_t m) {
  return (index >> (64 - kMemberBits)) == 0 && m <= kMemberMask;
}
uint64_t pack_member(uint64_t index, size_t m) { return (index << kMemberBits) | m; }
}  // namespace

namespace {

SessionRoutingSettings routing_settings(const proto::WorkerSettings& s) {
  std::string error;
  auto parsed = session_routing_settings(s, &error);
  if (!parsed) throw std::runtime_error("session routing settings: " + error);
  return *parsed;
}

// Messages of a turn given as a messages array, for history.
void append_messages(const std::string& messages_json, std::vector<ChatMessage>& out) {
  rapidjson::Document doc;
  doc.Parse(messages_json.c_str());
  if (doc.HasParseError() || !doc.IsArray()) return;
  for (const auto& m : doc.GetArray()) {
    if (!m.IsObject() || !m.HasMember("role") || !m["role"].IsString()) continue;
    ChatMessage msg{m["role"].GetString(), ""};
    if (m.HasMember("content") && m["content"].IsString()) msg.content = m["content"].GetString();
    out.push_back(std::move(msg));
  }
}

// target.models: the family's model (Conversation.model) replaces target.model in the body the
// builder made; "" keeps it.
void name_conversation_model(rapidjson::Document& body, const std::string& model) {
  if (model.empty() || !body.IsObject()) return;
  auto it = body.FindMember("model");
  if (it == body.MemberEnd()) return;
  it->value.SetString(model.data(), static_cast<rapidjson::SizeType>(model.size()),
                      body.GetAllocator());
}

}  // namespace

std::string endpoint_url(const std::string& base_url, proto::Endpoint endpoint,
                         const std::string& path) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (!path.empty()) return base + path;  // target.path: exactly the route the user named
  std::string route;
  switch (endpoint) {
    case proto::Endpoint::kChat:
      route = "/chat/completions";
      break;
    case proto::Endpoint::kCompletions:
      route = "/completions";
      break;
    case proto::Endpoint::kEmbeddings:
      route = "/embeddings";
      break;
    case proto::Endpoint::kResponses:
      route = "/responses";
      break;
    case proto::Endpoint::kMessages:
      route = "/messages";
      break;
  }
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0) return base + route;
  return base + "/v1" + route;
}

bool cancel_injected(uint64_t seed, uint64_t conversation_index, uint32_t turn_index,
                     double fraction, int32_t subagent) {
  if (fraction <= 0) return false;
  if (fraction >= 1) return true;
  uint64_t h =
      splitmix64(splitmix64(seed ^ 0xca9ce1ULL) ^ splitmix64(conversation_index) ^ turn_index);
  // A sub-agent's turns draw apart from the lead's (the lead's draw is unchanged).
  if (subagent >= 0) h = splitmix64(h ^ (0x5ab0a9e7ULL + static_cast<uint64_t>(subagent)));
  double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  return u < fraction;
}

ConversationRunner::ConversationRunner(EventLoop& loop, Transport& http,
                                       proto::WorkerSettings settings, std::string worker_id,
                                       RunnerSink sink)
    : loop_(loop),
      http_(http),
      settings_(std::move(settings)),
      worker_id_(std::move(worker_id)),
      sink_(std::move(sink)),
      router_(routing_settings(settings_)),

      request_id_rng_(std::random_device{}() ^ static_cast<uint64_t>(steady_now_ns())) {
  builder_ = std::make_unique<RequestBuilder>(settings_);
  // Throws tokenizer::LoadError (the worker cannot start the run: exit 2).
  if (!settings_.tokenizer.empty()) tokenizer_ = tokenizer::Tokenizer::load(settings_.tokenizer);
  if (settings_.urls.empty()) {
    urls_.push_back(endpoint_url(settings_.url, settings_.endpoint, settings_.path));
  } else {
    for (const auto& base : settings_.urls) {
      urls_.push_back(endpoint_url(base, settings_.endpoint, settings_.path));
    }
  }
  for (const auto& [name, value] : settings_.headers) base_headers_.push_back(name + ": " + value);
  if (!settings_.api_key_env.empty()) {
    // Each worker reads the key from its own environment; it never crosses the bus.
    if (const char* key = std::getenv(settings_.api_key_env.c_str()); key && *key) {
      base_headers_.push_back(std::string("Authorization: Bearer ") + key);
    }
  }
}

ConversationRunner::~ConversationRunner() {
  for (auto& [index, f] : active_) {
    for (const Member& member : f->members) {
      if (member.timer) loop_.cancel_timer(member.timer);
    }
  }
}

size_t ConversationRunner::in_flight_requests() const { return http_.in_flight(); }

std::string ConversationRunner::new_request_id() {
  // A fresh uuid4 per request, formatted by hand (snprintf was a visible cost per request).
  uint64_t hi = request_id_rng_(), lo = request_id_rng_();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(36, '-');
  size_t pos = 0;
  auto put = [&](uint64_t bits, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i) id[pos++] = kHex[(bits >> (4 * i)) & 0xf];
  };
  put(hi >> 32, 8);
  ++pos;
  put(hi >> 16, 4);
  ++pos;
  put(hi, 4);
  ++pos;
  put(lo >> 48, 4);
  ++pos;
  put(lo, 12);
  return id;
}

void ConversationRunner::assign(proto::Conversation conversation) {
  const uint64_t index = conversation.index;
  if (stopping_) {
    sink_.on_end({index, proto::EndReason::kCancelled});
    return;
  }
  if (active_.count(index)) {
    log_warn("conversation ", index, " assigned twice; ignoring the second");
    return;
  }
  std::unique_ptr<Family> owned = families_.take();
  Family& f = *owned;
  f.conv = std::move(conversation);
  const proto::Conversation& c = f.conv;
  if (c.url_index >= urls_.size()) {
    proto::Record r;
    r.x_correlation_id = c.correlation_id;
    r.conversation_id = c.conversation_id;
    r.conversation_index = index;
    r.turn_index = c.first_turn;
    r.phase = c.phase;
    r.url_index = c.url_index;
    r.intended_ns = c.start_ns;
    r.error = {proto::ErrorKind::kOther, 0, "url_index",
               "url_index " + std::to_string(c.url_index) + " is past the " +
                   std::to_string(urls_.size()) + " target url(s)"};
    sink_.on_record(std::move(r));
    sink_.on_end({index, proto::EndReason::kAborted});
    return;
  }
  f.build_members();
  const Member& lead = f.members[0];
  if (lead.next_turn >= lead.turns->size()) {
    sink_.on_end({index, proto::EndReason::kCompleted});
    return;
  }
  active_.emplace(index, std::move(owned));
  if (f.fan_in_met(0, lead.next_turn)) {
    schedule_turn(f, 0, f.conv.start_ns);
  } else {
    f.members[0].waiting = true;
    f.members[0].next_intended_ns = f.conv.start_ns;
  }
  // Fan-in members whose every wait names a member that never runs start with the lead.
  for (size_t m = 1; m < f.members.size(); ++m) {
    Member& member = f.members[m];
    if (member.fan_in_start && !member.finished && f.fan_in_met(m, 0)) {
      member.started = true;
      schedule_turn(f, m, f.conv.start_ns);
    }
  }
}

void ConversationRunner::schedule_turn(Family& f, size_t m, int64_t intended_ns) {
  Member& member = f.members[m];
  member.intended_ns = intended_ns;
  const uint64_t index = f.conv.index;
  // Late or due now: send from the loop, not from inside the caller's callback.
  const int64_t at = intended_ns <= steady_now_ns() ? 0 : intended_ns;
  if (packable(index, m)) {
    const uint64_t key = pack_member(index, m);
    member.timer =
        loop_.add_timer(at, [this, key] { send_turn(key >> kMemberBits, key & kMemberMask); });
  } else {
    member.timer = loop_.add_timer(at, [this, index, m] { send_turn(index, m); });
  }
}

void ConversationRunner::send_turn(uint64_t index, size_t m) {
  auto it = active_.find(index);
  if (it == active_.end()) return;
  Family& f = *it->second;
  Member& member = f.members[m];
  member.timer = 0;
  if (stopping_ || f.cancelled) {
    member_done(f, m, proto::EndReason::kCancelled);
    end_if_done(index);
    return;
  }
  const uint32_t turn_index = member.next_turn;
  const proto::Turn& turn = (*member.turns)[turn_index];
  const bool final_turn = turn_index + 1 == member.turns->size();

  rapidjson::Document& body = bodies_.fresh_document();
  std::string error;
  const bool server_state = settings_.endpoint == proto::Endpoint::kResponses &&
                            settings_.responses_state == proto::ResponsesState::kServer;
  if (!builder_->try_format(*member.system_prompt, member.history, turn, &body, &error,
                            server_state ? member.previous_response_id : std::string())) {
    member.request_id.clear();
    proto::Record r = f.record_of(m, turn_index, final_turn);
    r.error = {proto::ErrorKind::kOther, 0, "request_format", error};
    sink_.on_record(std::move(r));
    member_done(f, m, proto::EndReason::kAborted);
    end_if_done(index);
    return;
  }
  name_conversation_model(body, f.conv.model);
  const std::string_view parent =
      member.parent_correlation_id ? std::string_view(*member.parent_correlation_id) : "";
  member.overlay = router_.prepare(*member.correlation_id, final_turn, parent);
  add_router_keys(f, m, body);
  start_request(f, m, body,
                cancel_injected(settings_.seed, index, turn_index, settings_.cancel_fraction,
                                member.position));
}

// Other routers' keys (session_routing.writes) for member m's next request: its headers go
// out with the overlay's, its body fields into `body` now.
void ConversationRunner::add_router_keys(Family& f, size_t m, rapidjson::Document& body) {
  const SessionRoutingSettings& routing = router_.settings();
  if (routing.writes.empty()) return;
  Member& member = f.members[m];
  const std::string_view parent =
      member.parent_correlation_id ? std::string_view(*member.parent_correlation_id) : "";
  add_routing_writes(member.overlay, routing,
                     {*member.correlation_id, parent, f.conv.correlation_id, f.conv.url_index});
  set_body_fields(body, member.overlay.key_body);
}

void ConversationRunner::start_request(Family& f, size_t m, const rapidjson::Document& body,
                                       bool cancel_injection) {
  Member& member = f.members[m];
  std::string warning;
  HttpRequest req;
  req.body = bodies_.serialize(body, member.overlay, &warning, &member.session_control);
  if (!warning.empty()) {
    // The body is not a JSON object, so no session_control went out: an open the router just
    // planned was never sent, and the next turn must open again.
    router_.on_failed_before_server(*member.correlation_id, member.overlay);
    member.session_control = SessionControl{};
    if (!warned_non_object_) {
      warned_non_object_ = true;
      log_warn(warning);
    }
  }
  req.url = urls_[f.conv.url_index];
  req.headers.reserve(base_headers_.size() + 2 + member.overlay.headers.size());
  req.headers.insert(req.headers.end(), base_headers_.begin(), base_headers_.end());
  member.request_id = new_request_id();
  req.headers.push_back("X-Request-ID: " + member.request_id);
  req.headers.push_back("X-Correlation-ID: " + *member.correlation_id);
  for (const auto& [name, value] : member.overlay.headers) {
    req.headers.push_back(name + ": " + value);
  }
  for (const auto& [name, value] : member.overlay.key_headers) {
    req.headers.push_back(name + ": " + value);
  }
  req.endpoint = settings_.endpoint;
  req.streaming = settings_.streaming && settings_.endpoint != proto::Endpoint::kEmbeddings;
  req.request_timeout_s = member.kind == RequestKind::kRelease
                              ? std::min(settings_.request_timeout_s, kReleaseTimeoutS)
                              : settings_.request_timeout_s;
  req.connect_timeout_s = settings_.connect_timeout_s;
  if (settings_.max_response_bytes > 0) {
    req.max_response_bytes = static_cast<size_t>(settings_.max_response_bytes);
  }
  req.http2 = settings_.http2;
  req.insecure = settings_.insecure;
  if (cancel_injection) req.cancel_after_ms = settings_.cancel_after_ms;
  const uint64_t index = f.conv.index;
  if (packable(index, m)) {
    const uint64_t key = pack_member(index, m);
    member.request = http_.start(std::move(req), [this, key](HttpResponse&& response) {
      on_response(key >> kMemberBits, key & kMemberMask, std::move(response));
    });
  } else {
    member.request = http_.start(std::move(req), [this, index, m](HttpResponse&& response) {
      on_response(index, m, std::move(response));
    });
  }
}

// final_marker close_request: after the final turn, one more request for the same prompt with
// max_tokens 1 (its prefix is cached, so it costs the server one token) carrying the session
// headers and X-Dynamo-Session-Final: true. Recorded with close_request = true, one turn past
// the last, never final_turn; the controller keeps it out of every metric.
// An early release is the same one-token request for the turn that was cut, carrying what the
// final turn would have: bind/legacy close, or the close request's headers. Recorded with
// early_release = true and the cut turn's index, in no metric either.
void ConversationRunner::send_session_end(Family& f, size_t m, const proto::Turn& turn_to_repeat,
                                          int64_t intended_ns, RequestKind kind) {
  Member& member = f.members[m];
  proto::Turn turn = turn_to_repeat;
  turn.max_tokens = 1;
  rapidjson::Document& body = bodies_.fresh_document();
  std::string error;
  if (!builder_->try_format(*member.system_prompt, member.history, turn, &body, &error)) {
    return;  // a turn that did not format has no session to end
  }
  name_conversation_model(body, f.conv.model);
  member.kind = kind;
  member.intended_ns = intended_ns;
  const std::string_view parent =
      member.parent_correlation_id ? std::string_view(*member.parent_correlation_id) : "";
  member.overlay =
      kind == RequestKind::kRelease
          ? plan_release_overlay(router_.settings(), *member.correlation_id, parent)
          : plan_close_request_overlay(router_.settings(), *member.correlation_id, parent);
  add_router_keys(f, m, body);
  start_request(f, m, body, false);
}

// Sessions the server may still hold (bind, legacy, header with close_request): one that a
// request may have opened (it reached the server) stays open until a close or release for it is
// answered 2xx. A request that failed before reaching the server, or that the server refused
// with a 4xx (e.g. a bind it does not know), opened nothing.
void ConversationRunner::note_session(Family& f, size_t m, const HttpResponse& response) {
  Member& member = f.members[m];
  if (!releases_sessions(router_.settings())) return;
  const bool reached = response.request_reached_server || response.http_status != 0;
  const bool refused = response.http_status >= 400 && response.http_status < 500;
  if (reached && !refused && member.overlay.may_open_session()) member.session_open = true;
  const bool accepted = response.http_status >= 200 && response.http_status < 300;
  if (accepted && member.overlay.ends_session()) member.session_closed = true;
}

void ConversationRunner::release_if_open(Family& f, size_t m) {
  Member& member = f.members[m];
  if (member.request || !member.session_open || member.session_closed || member.release_sent) {
    return;
  }
  if (member.next_turn >= member.turns->size()) return;
  member.release_sent = true;
  send_session_end(f, m, (*member.turns)[member.next_turn], steady_now_ns(), RequestKind::kRelease);
}

proto::Record ConversationRunner::response_record(Family& f, size_t m, uint32_t turn_index,
                                                  bool final_turn, RequestKind kind,
                                                  HttpResponse& response) const {
  Member& member = f.members[m];
  proto::Record r = kind == RequestKind::kCloseRequest ? f.record_of(m, turn_index + 1, false)
                    : kind == RequestKind::kRelease    ? f.record_of(m, turn_index, false)
                                                       : f.record_of(m, turn_index, final_turn);
  r.x_request_id = std::move(member.request_id);  // the member's next request draws a new one
  r.close_request = kind == RequestKind::kCloseRequest;
  r.early_release = kind == RequestKind::kRelease;
  static_cast<proto::Timings&>(r) = std::move(static_cast<proto::Timings&>(response));
  r.usage_from_server = response.has_usage;
  r.input_tokens =
      response.has_usage ? response.prompt_tokens : (*member.turns)[turn_index].input_tokens_est;
  // Without usage: the reply's text counted by dataset.tokenizer, else one token per event.
  r.output_tokens = response.has_usage ? response.completion_tokens
                    : tokenizer_ ? static_cast<int64_t>(tokenizer_->count(response.reply_text))
                                 : response.content_events;
  r.cached_tokens = response.cached_tokens;
  // The server's count when it gives one (part of completion_tokens), else one per reasoning
  // event, as output_tokens falls back to content events.
  r.reasoning_tokens =
      response.reasoning_tokens >= 0 ? response.reasoning_tokens : response.reasoning_events;
  r.http_status = response.http_status;
  r.error = response.error;
  r.session_control = f.members[m].session_control;
  r.served_by = std::move(response.served_by);
  r.dp_rank = response.dp_rank;
  r.server_timing = response.server_timing;
  return r;
}

void ConversationRunner::on_response(uint64_t index, size_t m, HttpResponse&& response) {
  auto it = active_.find(index);
  if (it == active_.end()) return;
  Family& f = *it->second;
  Member& member = f.members[m];
  member.request.reset();
  const uint32_t turn_index = member.next_turn;
  const proto::Turn& turn = (*member.turns)[turn_index];
  const bool final_turn = turn_index + 1 == member.turns->size();
  const RequestKind kind = member.kind;
  member.kind = RequestKind::kTurn;

  proto::Record r = response_record(f, m, turn_index, final_turn, kind, response);

  const bool ok = response.error.kind == proto::ErrorKind::kNone;
  if (!ok && !response.request_reached_server) {
    router_.on_failed_before_server(*member.correlation_id, member.overlay);
  }
  note_session(f, m, response);
  sink_.on_record(std::move(r));

  if (kind != RequestKind::kTurn) {
    // The member's turns were over (member_done ran then); how the close or release went
    // changes nothing but the session ledger, and the family ends only once it is back.
    end_if_done(index);
    return;
  }
  if (!ok) {
    // Later turns depend on this one's reply: the conversation ends here.
    member_done(f, m,
                response.error.kind == proto::ErrorKind::kCancelled ? proto::EndReason::kCancelled
                                                                    : proto::EndReason::kAborted);
    end_if_done(index);
    return;
  }
  const bool more = !stopping_ && !f.cancelled;
  // Sub-agents spawned here count before anything can finish this member.
  if (more) spawn_children(f, m, turn_index + 1, response.end_ns);
  const bool send_close = final_turn && more && sends_close_request(router_.settings());
  if (send_close) {
    // Same prompt as the final turn: formatted before the reply joins the history.
    send_session_end(f, m, turn, response.end_ns, RequestKind::kCloseRequest);
  }
  if (final_turn) {
    // Done now: a parent waiting for this sub-agent does not wait for its close request.
    member_done(f, m, proto::EndReason::kCompleted);
    end_if_done(index);
    return;
  }
  if (!more) {
    member_done(f, m, proto::EndReason::kCancelled);
    end_if_done(index);
    return;
  }
  // Only a next turn reads the history (the close request was formatted above, before it).
  member.previous_response_id = std::move(response.response_id);
  if (!turn.messages_json.empty()) {
    append_messages(turn.messages_json, member.history);
  } else {
    member.history.push_back({"user", turn.user_text});
  }
  if (settings_.history == proto::HistoryMode::kRecorded) {
    member.history.push_back({"assistant", turn.recorded_reply});
  } else {
    member.history.push_back({"assistant", std::move(response.reply_text)});
  }
  member.next_turn = turn_index + 1;
  // Turn k+1 is intended at end(k) + think time, and not before the sub-agents spawned at k
  // have finished (an agent waits for its sub-agents).
  const double delay_ms = (*member.turns)[member.next_turn].delay_ms;
  member.next_intended_ns = response.end_ns + ms_to_ns(delay_ms);
  if (member.running_children > 0 || !f.fan_in_met(m, member.next_turn)) {
    member.waiting = true;
  } else {
    schedule_turn(f, m, member.next_intended_ns);
  }
}

void ConversationRunner::end_if_done(uint64_t index) {
  auto it = active_.find(index);
  if (it == active_.end()) return;
  Family& f = *it->second;
  if (!f.all_finished()) return;
  for (const Member& member : f.members) {
    if (member.request) return;  // a close request still out
  }
  const proto::ConversationEnd end = f.end();
  families_.give_back(std::move(it->second));
  active_.erase(it);
  sink_.on_end(end);
}

void ConversationRunner::stop_starting() {
  stopping_ = true;
  std::vector<uint64_t> indices;
  for (const auto& [index, f] : active_) indices.push_back(index);
  for (uint64_t index : indices) {
    auto it = active_.find(index);
    if (it == active_.end()) continue;
    Family& f = *it->second;
    for (size_t m = 0; m < f.members.size(); ++m) {
      Member& member = f.members[m];
      if (!member.turns_done && !member.request && (member.timer || member.waiting)) {
        member_done(f, m, proto::EndReason::kCancelled);
      }
    }
    end_if_done(index);
  }
}

void ConversationRunner::cancel_all() {
  stopping_ = true;
  // Each cancelled transfer's callback records the cancellation and ends its conversation (and
  // sends its release); conversations between turns end here. Releases already out are left to
  // finish: each is bounded by kReleaseTimeoutS.
  for (const auto& [index, f] : active_) {
    for (const Member& member : f->members) {
      if (member.request && member.kind != RequestKind::kRelease) http_.cancel(*member.request);
    }
  }
  stop_starting();
}

}  // namespace convoy::worker
