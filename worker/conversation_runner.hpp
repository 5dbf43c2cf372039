// Runs whole conversations on one worker: turn pacing on the event loop's timers, history,
// the session-routing overlay, and one record per request. A conversation may be a family (a
// lead and its sub-agents, worker/conversation_family.hpp): the runner paces every member's
// turns and sends one ConversationEnd for the family.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "proto/messages.hpp"
#include "tokenizer/tokenizer.hpp"
#include "worker/conversation_family.hpp"
#include "worker/event_loop.hpp"
#include "worker/request_builder.hpp"
#include "worker/session_routing.hpp"
#include "worker/transport.hpp"

namespace convoy::worker {

struct RunnerSink {
  std::function<void(proto::Record&&)> on_record;
  std::function<void(const proto::ConversationEnd&)> on_end;
};

// The path of an endpoint under the target url ("/v1/chat/completions" ...). A url that already
// ends in /v1 is not given a second one. A non-empty `path` (target.path) replaces the route
// as is (appended to the base url, which then gets no /v1 of its own).
std::string endpoint_url(const std::string& base_url, proto::Endpoint endpoint,
                         const std::string& path = {});

// Whether cancellation injection picks this request: a pure function of the seed and the
// request's place in the dataset, so reruns cancel the same requests.
// `subagent`: -1 for the lead (the draw of every run before sub-agents), else the sub-agent's
// position in Conversation.subagents.
bool cancel_injected(uint64_t seed, uint64_t conversation_index, uint32_t turn_index,
                     double fraction, int32_t subagent = -1);

class ConversationRunner {
 public:
  // `loop` paces the turns; `http` carries the requests (HttpClient, or a test's fake).
  ConversationRunner(EventLoop& loop, Transport& http, proto::WorkerSettings settings,
                     std::string worker_id, RunnerSink sink);
  ~ConversationRunner();
  ConversationRunner(const ConversationRunner&) = delete;
  ConversationRunner& operator=(const ConversationRunner&) = delete;

  // Takes ownership of a conversation (a family when it has sub-agents); its first turn starts
  // at conversation.start_ns (this worker's steady clock) or now, whichever is later.
  void assign(proto::Conversation conversation);

  // Start nothing new: conversations (and sub-agents) between requests end as cancelled now;
  // those with a request in flight end when it completes.
  void stop_starting();
  // Cancel every transfer; every conversation ends (cancelled).
  void cancel_all();

  size_t active_conversations() const { return active_.size(); }
  size_t in_flight_requests() const;
  size_t legacy_open_sessions() const { return router_.legacy_open_count(); }

 private:
  using Member = FamilyMember;
  using Family = ConversationFamily;

  void schedule_turn(Family& f, size_t m, int64_t intended_ns);
  void send_turn(uint64_t index, size_t m);
  // The close request after the final turn (kCloseRequest) or an early release (kRelease): `turn`'s
  // prompt again with max_tokens 1 and the session's closing overlay.
  void send_session_end(Family& f, size_t m, const proto::Turn& turn, int64_t intended_ns,
                        RequestKind kind);
  // Member m's turns ended without closing a session the server may hold: release it.
  void release_if_open(Family& f, size_t m);
  void note_session(Family& f, size_t m, const HttpResponse& response);
  void add_router_keys(Family& f, size_t m, rapidjson::Document& body);
  void start_request(Family& f, size_t m, const rapidjson::Document& body, bool cancel_injection);
  void on_response(uint64_t index, size_t m, HttpResponse&& response);
  void spawn_children(Family& f, size_t m, uint32_t turns_ended, int64_t end_ns);
  void skip_member(Family& f, size_t m);
  void notify_waiters(Family& f, size_t m);
  void resume_after_fan_in(Family& f, size_t m, uint32_t turn);
  void member_done(Family& f, size_t m, proto::EndReason reason);
  void settle(Family& f, size_t m);
  void cancel_family(Family& f, proto::EndReason reason);
  void end_if_done(uint64_t index);
  // The record of the request that `response` answers (a close request is numbered one past
  // the final turn, a release carries the turn it cut); takes the response's chunk gaps and
  // serving worker, and the member's request id.
  proto::Record response_record(Family& f, size_t m, uint32_t turn_index, bool final_turn,
                                RequestKind kind, HttpResponse& response) const;
  std::string new_request_id();

  EventLoop& loop_;
  Transport& http_;
  proto::WorkerSettings settings_;
  // settings_.tokenizer loaded (null: none): output tokens of replies without usage.
  std::unique_ptr<const tokenizer::Tokenizer> tokenizer_;
  std::string worker_id_;
  RunnerSink sink_;
  SessionRouter router_;
  std::unique_ptr<RequestBuilder> builder_;
  RequestBodyArena bodies_;  // every request body is built and written here
  bool warned_non_object_ = false;
  std::vector<std::string> urls_;  // endpoint urls: target.urls[i], or target.url alone
  std::vector<std::string> base_headers_;
  bool stopping_ = false;
  std::mt19937_64 request_id_rng_;
  std::unordered_map<uint64_t, std::unique_ptr<Family>> active_;  // by conversation index
  FamilyPool families_;  // ended families, reset, for the next ones
};

}  // namespace convoy::worker
