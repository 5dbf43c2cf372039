#include "worker/conversation_runner.hpp"

#include <rapidjson/document.h>

#include <cstdio>
#include <cstdlib>

#include "common/hash.hpp"
#include "common/log.hpp"

namespace convoy::worker {

struct ConversationRunner::Active {
  proto::Conversation conv;
  uint32_t next_turn = 0;
  std::vector<ChatMessage> history;
  EventLoop::TimerId timer = 0;
  std::optional<Transport::RequestId> request;
  int64_t intended_ns = 0;  // of the turn being scheduled or sent
  SessionOverlay overlay;   // of the request in flight
  std::string request_id;
  std::string session_control;
};

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

}  // namespace

std::string endpoint_url(const std::string& base_url, proto::Endpoint endpoint) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::string path = endpoint == proto::Endpoint::kCompletions  ? "/completions"
                     : endpoint == proto::Endpoint::kEmbeddings ? "/embeddings"
                                                                : "/chat/completions";
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0) return base + path;
  return base + "/v1" + path;
}

bool cancel_injected(uint64_t seed, uint64_t conversation_index, uint32_t turn_index,
                     double fraction) {
  if (fraction <= 0) return false;
  if (fraction >= 1) return true;
  uint64_t h =
      splitmix64(splitmix64(seed ^ 0xca9ce1ULL) ^ splitmix64(conversation_index) ^ turn_index);
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
      url_(endpoint_url(settings_.url, settings_.endpoint)),
      request_id_rng_(std::random_device{}() ^ static_cast<uint64_t>(steady_now_ns())) {
  builder_ = std::make_unique<RequestBuilder>(settings_);
  for (const auto& [name, value] : settings_.headers) base_headers_.push_back(name + ": " + value);
  if (!settings_.api_key_env.empty()) {
    // Each worker reads the key from its own environment; it never crosses the bus.
    if (const char* key = std::getenv(settings_.api_key_env.c_str()); key && *key) {
      base_headers_.push_back(std::string("Authorization: Bearer ") + key);
    }
  }
}

ConversationRunner::~ConversationRunner() {
  for (auto& [index, a] : active_) {
    if (a->timer) loop_.cancel_timer(a->timer);
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
  uint64_t index = conversation.index;
  if (stopping_) {
    sink_.on_end({index, proto::EndReason::kCancelled});
    return;
  }
  if (active_.count(index)) {
    log_warn("conversation ", index, " assigned twice; ignoring the second");
    return;
  }
  auto a = std::make_unique<Active>();
  a->conv = std::move(conversation);
  a->next_turn = a->conv.first_turn;
  if (a->next_turn >= a->conv.turns.size()) {
    sink_.on_end({index, proto::EndReason::kCompleted});
    return;
  }
  Active& ref = *a;
  active_.emplace(index, std::move(a));
  schedule_turn(ref, ref.conv.start_ns);
}

void ConversationRunner::schedule_turn(Active& a, int64_t intended_ns) {
  a.intended_ns = intended_ns;
  uint64_t index = a.conv.index;
  if (intended_ns <= steady_now_ns()) {
    // Late or due now: send from the loop, not from inside the caller's callback.
    a.timer = loop_.add_timer(0, [this, index] { send_turn(index); });
  } else {
    a.timer = loop_.add_timer(intended_ns, [this, index] { send_turn(index); });
  }
}

void ConversationRunner::send_turn(uint64_t index) {
  auto it = active_.find(index);
  if (it == active_.end()) return;
  Active& a = *it->second;
  a.timer = 0;
  if (stopping_) {
    finish(index, proto::EndReason::kCancelled);
    return;
  }
  const uint32_t turn_index = a.next_turn;
  const proto::Turn& turn = a.conv.turns[turn_index];
  const bool final_turn = turn_index + 1 == a.conv.turns.size();

  rapidjson::Document body;
  std::string error;
  if (!builder_->try_format(a.conv.system_prompt, a.history, turn, &body, &error)) {
    proto::Record r;
    r.x_correlation_id = a.conv.correlation_id;
    r.conversation_id = a.conv.conversation_id;
    r.conversation_index = index;
    r.turn_index = turn_index;
    r.final_turn = final_turn;
    r.phase = a.conv.phase;
    r.intended_ns = a.intended_ns;
    r.error = {proto::ErrorKind::kOther, 0, "request_format", error};
    sink_.on_record(std::move(r));
    finish(index, proto::EndReason::kAborted);
    return;
  }
  a.overlay = router_.prepare(a.conv.correlation_id, final_turn);
  std::string warning;
  HttpRequest req;
  req.body = serialize_request(body, a.overlay, &warning, &a.session_control);
  if (!warning.empty()) {
    // The body is not a JSON object, so no session_control went out: an open the router just
    // planned was never sent, and the next turn must open again.
    router_.on_failed_before_server(a.conv.correlation_id, a.overlay);
    a.session_control.clear();
    if (!warned_non_object_) {
      warned_non_object_ = true;
      log_warn(warning);
    }
  }
  req.url = url_;
  req.headers = base_headers_;
  a.request_id = new_request_id();
  req.headers.push_back("X-Request-ID: " + a.request_id);
  req.headers.push_back("X-Correlation-ID: " + a.conv.correlation_id);
  for (const auto& [name, value] : a.overlay.headers) req.headers.push_back(name + ": " + value);
  req.endpoint = settings_.endpoint;
  req.streaming = settings_.streaming && settings_.endpoint != proto::Endpoint::kEmbeddings;
  req.request_timeout_s = settings_.request_timeout_s;
  req.connect_timeout_s = settings_.connect_timeout_s;
  if (settings_.max_response_bytes > 0) {
    req.max_response_bytes = static_cast<size_t>(settings_.max_response_bytes);
  }
  req.http2 = settings_.http2;
  req.insecure = settings_.insecure;
  if (cancel_injected(settings_.seed, index, turn_index, settings_.cancel_fraction)) {
    req.cancel_after_ms = settings_.cancel_after_ms;
  }
  a.request = http_.start(std::move(req), [this, index](HttpResponse&& response) {
    on_response(index, std::move(response));
  });
}

void ConversationRunner::on_response(uint64_t index, HttpResponse&& response) {
  auto it = active_.find(index);
  if (it == active_.end()) return;
  Active& a = *it->second;
  a.request.reset();
  const uint32_t turn_index = a.next_turn;
  const proto::Turn& turn = a.conv.turns[turn_index];
  const bool final_turn = turn_index + 1 == a.conv.turns.size();

  proto::Record r;
  r.x_request_id = a.request_id;
  r.x_correlation_id = a.conv.correlation_id;
  r.conversation_id = a.conv.conversation_id;
  r.conversation_index = index;
  r.turn_index = turn_index;
  r.final_turn = final_turn;
  r.phase = a.conv.phase;
  r.intended_ns = a.intended_ns;
  r.sent_ns = response.sent_ns;
  r.first_byte_ns = response.first_byte_ns;
  r.first_token_ns = response.first_token_ns;
  r.second_token_ns = response.second_token_ns;
  r.last_token_ns = response.last_token_ns;
  r.end_ns = response.end_ns;
  r.chunk_gaps_ns = std::move(response.chunk_gaps_ns);
  r.usage_from_server = response.has_usage;
  r.input_tokens = response.has_usage ? response.prompt_tokens : turn.input_tokens_est;
  r.output_tokens = response.has_usage ? response.completion_tokens : response.content_events;
  r.cached_tokens = response.cached_tokens;
  r.http_status = response.http_status;
  r.error = response.error;
  r.session_control = a.session_control;

  const bool ok = response.error.kind == proto::ErrorKind::kNone;
  if (!ok && !response.request_reached_server) {
    router_.on_failed_before_server(a.conv.correlation_id, a.overlay);
  }
  sink_.on_record(std::move(r));

  if (!ok) {
    // Later turns depend on this one's reply: the conversation ends here.
    finish(index, response.error.kind == proto::ErrorKind::kCancelled ? proto::EndReason::kCancelled
                                                                      : proto::EndReason::kAborted);
    return;
  }
  if (!turn.messages_json.empty()) {
    append_messages(turn.messages_json, a.history);
  } else {
    a.history.push_back({"user", turn.user_text});
  }
  a.history.push_back({"assistant", settings_.history == proto::HistoryMode::kRecorded
                                        ? turn.recorded_reply
                                        : response.reply_text});
  if (final_turn) {
    finish(index, proto::EndReason::kCompleted);
    return;
  }
  if (stopping_) {
    finish(index, proto::EndReason::kCancelled);
    return;
  }
  a.next_turn = turn_index + 1;
  // Turn k+1 is intended at end(k) + think time.
  const double delay_ms = a.conv.turns[a.next_turn].delay_ms;
  schedule_turn(a, response.end_ns + static_cast<int64_t>(delay_ms * 1e6));
}

void ConversationRunner::finish(uint64_t index, proto::EndReason reason) {
  auto it = active_.find(index);
  if (it == active_.end()) return;
  Active& a = *it->second;
  if (a.timer) loop_.cancel_timer(a.timer);
  router_.on_conversation_end(a.conv.correlation_id, reason == proto::EndReason::kCompleted);
  active_.erase(it);
  sink_.on_end({index, reason});
}

void ConversationRunner::stop_starting() {
  stopping_ = true;
  std::vector<uint64_t> idle;
  for (const auto& [index, a] : active_) {
    if (!a->request) idle.push_back(index);
  }
  for (uint64_t index : idle) finish(index, proto::EndReason::kCancelled);
}

void ConversationRunner::cancel_all() {
  stopping_ = true;
  // Each cancelled transfer's callback records the cancellation and ends its conversation;
  // conversations between turns end here.
  http_.cancel_all();
  stop_starting();
}

}  // namespace convoy::worker
