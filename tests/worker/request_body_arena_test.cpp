// RequestBodyArena (no heap allocation per request body): bodies built in the reused arena and
// written through its kept writer are the bytes a fresh document and serialize_request() give,
// request after request.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "worker/request_builder.hpp"
#include "worker/session_routing.hpp"

using namespace convoy::worker;
using convoy::proto::Endpoint;
using convoy::proto::SessionRoutingMode;
using convoy::proto::Turn;
using convoy::proto::WorkerSettings;

namespace {

WorkerSettings arena_settings(Endpoint endpoint) {
  WorkerSettings s;
  s.endpoint = endpoint;
  s.model = "m";
  s.streaming = true;
  s.use_server_token_counts = true;
  s.extra_body_json = R"({"ignore_eos":true,"nvext":{"keep":1}})";
  return s;
}

Turn arena_turn(std::string text, int64_t max_tokens) {
  Turn t;
  t.user_text = std::move(text);
  t.max_tokens = max_tokens;
  return t;
}

// Small, large (past the arena's first 16 KiB, then past its grown size), with messages_json
// and extra_json, and small again after the large ones.
std::vector<Turn> turns() {
  std::vector<Turn> out;
  out.push_back(arena_turn("hello", 16));
  out.push_back(arena_turn(std::string(40u << 10, 'a'), 8));
  out.push_back(arena_turn(std::string(300u << 10, 'b'), 8));
  Turn messages = arena_turn("", 4);
  messages.messages_json = R"([{"role":"user","content":"from messages"}])";
  messages.extra_json = R"({"temperature":0.5,"nvext":{"extra_fields":["x"]}})";
  out.push_back(messages);
  out.push_back(arena_turn("small again", 2));
  return out;
}

}  // namespace

TEST_CASE("request body arena: the bytes are serialize_request's, request after request") {
  const std::vector<ChatMessage> history = {{"user", "u0"}, {"assistant", std::string(5000, 'h')}};
  SessionRoutingSettings bind;
  bind.mode = SessionRoutingMode::kBind;
  bind.timeout_s = 30;
  const SessionOverlay overlays[] = {
      SessionOverlay{},
      plan_session_overlay(bind, "c0ffee00-0000-4000-8000-000000000001", false, true)};
  for (const Endpoint endpoint : {Endpoint::kChat, Endpoint::kCompletions, Endpoint::kEmbeddings}) {
    const WorkerSettings s = arena_settings(endpoint);
    const RequestBuilder builder(s);
    RequestBodyArena arena;
    for (int round = 0; round < 2; ++round) {
      for (const Turn& t : turns()) {
        for (const SessionOverlay& overlay : overlays) {
          INFO("endpoint " << static_cast<int>(endpoint) << ", text " << t.user_text.size()
                           << " bytes, overlay " << overlay.session_control_json);
          SessionControl fresh_sent;
          std::string fresh_warning;
          const std::string fresh = serialize_request(format_body(s, "sys", history, t), overlay,
                                                      &fresh_warning, &fresh_sent);
          rapidjson::Document& body = arena.fresh_document();
          std::string error;
          REQUIRE(builder.try_format("sys", history, t, &body, &error));
          SessionControl sent{"stale", convoy::proto::SessionAction::kOpen, 1, {}};
          std::string warning;
          CHECK(arena.serialize(body, overlay, &warning, &sent) == fresh);
          CHECK(session_control_json(sent) == session_control_json(fresh_sent));
          CHECK(sent.other_keys == fresh_sent.other_keys);
          CHECK(warning == fresh_warning);
        }
      }
    }
  }
}

TEST_CASE("request body arena: a turn that fails to format leaves the document alone") {
  const WorkerSettings s = arena_settings(Endpoint::kChat);
  const RequestBuilder builder(s);
  RequestBodyArena arena;
  rapidjson::Document& body = arena.fresh_document();
  std::string error;
  REQUIRE(builder.try_format("", {}, arena_turn("ok", 1), &body, &error));
  std::string warning;
  const std::string before = arena.serialize(body, SessionOverlay{}, &warning);
  Turn bad = arena_turn("", 1);
  bad.messages_json = R"([{"role":"nobody"}])";
  CHECK_FALSE(builder.try_format("", {}, bad, &body, &error));
  CHECK(error.find("role") != std::string::npos);
  CHECK(arena.serialize(body, SessionOverlay{}, &warning) == before);
}
