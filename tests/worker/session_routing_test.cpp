#include <doctest/doctest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "test_util.hpp"
#include "worker/request_builder.hpp"
#include "worker/session_routing.hpp"

using namespace convoy::worker;
using convoy::proto::SessionRoutingMode;

namespace {

const std::string kId = "c0ffee00-0000-4000-8000-000000000001";

SessionRoutingSettings mode(SessionRoutingMode m, int64_t timeout_s = 300) {
  SessionRoutingSettings s;
  s.mode = m;
  s.timeout_s = timeout_s;
  return s;
}

std::string sc(const std::string& action, int64_t timeout_s = 0) {
  std::string out = R"({"session_id":")" + kId + "\"";
  if (!action.empty()) out += R"(,"action":")" + action + "\"";
  if (timeout_s > 0) out += R"(,"timeout":)" + std::to_string(timeout_s);
  return out + "}";
}

// The session_control JSON of each request a worker sends for turns [first_turn, turns).
std::vector<std::string> sequence(SessionRouter& router, int turns, int first_turn = 0) {
  std::vector<std::string> out;
  for (int k = first_turn; k < turns; ++k) {
    out.push_back(router.prepare(kId, k == turns - 1).session_control_json);
  }
  return out;
}

rapidjson::Document parse_body(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

}  // namespace

TEST_CASE("settings come from the Welcome's WorkerSettings with config defaults") {
  convoy::proto::WorkerSettings ws;
  std::string error;
  SUBCASE("defaults") {
    auto s = session_routing_settings(ws, &error);
    REQUIRE(s);
    CHECK(s->mode == SessionRoutingMode::kOff);
    CHECK(s->timeout_s == 300);
    CHECK(s->header_name == "X-Dynamo-Session-ID");
  }
  SUBCASE("every mode is taken as it arrives") {
    for (auto m : {SessionRoutingMode::kOff, SessionRoutingMode::kBind, SessionRoutingMode::kLegacy,
                   SessionRoutingMode::kHeader}) {
      ws.session_routing.mode = m;
      auto s = session_routing_settings(ws, &error);
      REQUIRE(s);
      CHECK(s->mode == m);
    }
    ws.session_routing.mode = SessionRoutingMode::kLegacy;
    ws.session_routing.timeout_s = 30;
    ws.session_routing.header_name = "X-S";
    auto s = session_routing_settings(ws, &error);
    REQUIRE(s);
    CHECK(s->mode == SessionRoutingMode::kLegacy);
    CHECK(s->timeout_s == 30);
    CHECK(s->header_name == "X-S");
  }
  SUBCASE("bad values are errors") {
    ws.session_routing.mode = SessionRoutingMode::kBind;
    ws.session_routing.timeout_s = 0;
    CHECK_FALSE(session_routing_settings(ws, &error));
    CHECK(error.find("timeout_s") != std::string::npos);
    ws.session_routing.timeout_s = 300;
    ws.session_routing.mode = SessionRoutingMode::kHeader;
    ws.session_routing.header_name = "";
    CHECK_FALSE(session_routing_settings(ws, &error));
    CHECK(error.find("header_name") != std::string::npos);
  }
}

TEST_CASE("bind: bind+timeout on every non-final turn, close on the final one") {
  SessionRouter router(mode(SessionRoutingMode::kBind, 120));
  SUBCASE("multi-turn") {
    CHECK(sequence(router, 4) ==
          std::vector<std::string>{sc("bind", 120), sc("bind", 120), sc("bind", 120), sc("close")});
  }
  SUBCASE("single-turn sends only close") {
    CHECK(sequence(router, 1) == std::vector<std::string>{sc("close")});
  }
  SUBCASE("mid-conversation start is no different") {
    CHECK(sequence(router, 5, 3) == std::vector<std::string>{sc("bind", 120), sc("close")});
  }
  SUBCASE("no headers and no tracking") {
    auto o = router.prepare(kId, false);
    CHECK(o.headers.empty());
    REQUIRE(o.session_control);
    CHECK(o.session_control->action == convoy::proto::SessionAction::kBind);
    CHECK(o.session_control->timeout_s == 120);
    CHECK(router.legacy_open_count() == 0);
  }
}

TEST_CASE("legacy: open on the first request this worker sends, bare after, close at the end") {
  SessionRouter router(mode(SessionRoutingMode::kLegacy, 60));
  SUBCASE("multi-turn") {
    CHECK(sequence(router, 4) ==
          std::vector<std::string>{sc("open", 60), sc(""), sc(""), sc("close")});
    CHECK(router.legacy_open_count() == 0);
  }
  SUBCASE("the bare form is exactly {session_id}") {
    router.prepare(kId, false);
    auto o = router.prepare(kId, false);
    CHECK(o.session_control_json == R"({"session_id":")" + kId + R"("})");
  }
  SUBCASE("single-turn sends only close") {
    CHECK(sequence(router, 1) == std::vector<std::string>{sc("close")});
    CHECK(router.legacy_open_count() == 0);
  }
  SUBCASE("a worker that first sees the conversation at turn 3 opens there") {
    CHECK(sequence(router, 6, 3) == std::vector<std::string>{sc("open", 60), sc(""), sc("close")});
  }
  SUBCASE("a mid-conversation start at the final turn sends only close") {
    CHECK(sequence(router, 6, 5) == std::vector<std::string>{sc("close")});
  }
  SUBCASE("open is never sent twice for one conversation") {
    CHECK(router.prepare(kId, false).opens_session());
    for (int i = 0; i < 10; ++i) CHECK_FALSE(router.prepare(kId, false).opens_session());
    CHECK(router.legacy_open_count() == 1);
  }
  SUBCASE("another conversation opens on its own") {
    CHECK(router.prepare(kId, false).opens_session());
    CHECK(router.prepare("other", false).opens_session());
    CHECK(router.legacy_open_count() == 2);
  }
}

TEST_CASE("header: no body field, the header on every turn") {
  auto s = mode(SessionRoutingMode::kHeader);
  s.header_name = "X-Dynamo-Session-ID";
  SessionRouter router(s);
  for (int k = 0; k < 3; ++k) {
    auto o = router.prepare(kId, k == 2);
    CHECK_FALSE(o.session_control);
    CHECK(o.session_control_json.empty());
    REQUIRE(o.headers.size() == 1);
    CHECK(o.headers[0].first == "X-Dynamo-Session-ID");
    CHECK(o.headers[0].second == kId);
  }
  CHECK(router.legacy_open_count() == 0);
}

TEST_CASE("off: nothing at all") {
  SessionRouter router(mode(SessionRoutingMode::kOff));
  for (bool final_turn : {false, true}) {
    auto o = router.prepare(kId, final_turn);
    CHECK(o.empty());
    CHECK(o.session_control_json.empty());
  }
}

TEST_CASE("plan_session_overlay is the pure policy behind the router") {
  auto legacy = mode(SessionRoutingMode::kLegacy, 10);
  CHECK(plan_session_overlay(legacy, kId, false, true).session_control_json == sc("open", 10));
  CHECK(plan_session_overlay(legacy, kId, false, false).session_control_json == sc(""));
  CHECK(plan_session_overlay(legacy, kId, true, true).session_control_json == sc("close"));
  CHECK(plan_session_overlay(legacy, kId, true, false).session_control_json == sc("close"));
  auto bind = mode(SessionRoutingMode::kBind, 10);
  for (bool first : {false, true}) {
    CHECK(plan_session_overlay(bind, kId, false, first).session_control_json == sc("bind", 10));
    CHECK(plan_session_overlay(bind, kId, true, first).session_control_json == sc("close"));
  }
  SUBCASE("ids are JSON-escaped") {
    auto o = plan_session_overlay(bind, "a\"b", true, false);
    CHECK(o.session_control_json == R"({"session_id":"a\"b","action":"close"})");
  }
}

TEST_CASE("legacy open-tracking set: add, rollback, remove, discard") {
  SUBCASE("tracker primitives") {
    LegacyOpenTracker t;
    CHECK(t.should_open("a"));
    t.mark_opened("a");
    CHECK_FALSE(t.should_open("a"));
    CHECK(t.size() == 1);
    t.rollback("a");
    CHECK(t.should_open("a"));
    CHECK(t.size() == 0);
    t.mark_opened("a");
    t.remove_on_final("a");
    CHECK(t.size() == 0);
    t.mark_opened("a");
    t.discard("a");
    t.discard("a");        // idempotent
    t.discard("unknown");  // no-op
    t.rollback("unknown");
    t.remove_on_final("unknown");
    CHECK(t.size() == 0);
    t.mark_opened("a");
    t.mark_opened("b");
    t.clear();
    CHECK(t.size() == 0);
  }
  SessionRouter router(mode(SessionRoutingMode::kLegacy, 60));
  SUBCASE("open that fails before the server is rolled back; the next turn opens again") {
    auto sent = router.prepare(kId, false);
    REQUIRE(sent.opens_session());
    router.on_failed_before_server(kId, sent);
    CHECK(router.legacy_open_count() == 0);
    CHECK(router.prepare(kId, false).session_control_json == sc("open", 60));
    CHECK(router.legacy_open_count() == 1);
  }
  SUBCASE("a failed bare request does not roll back the earlier open") {
    router.prepare(kId, false);
    auto bare = router.prepare(kId, false);
    router.on_failed_before_server(kId, bare);
    CHECK(router.legacy_open_count() == 1);
    CHECK(router.prepare(kId, false).session_control_json == sc(""));
  }
  SUBCASE("a failed close leaves nothing behind") {
    router.prepare(kId, false);
    auto close = router.prepare(kId, true);
    router.on_failed_before_server(kId, close);
    CHECK(router.legacy_open_count() == 0);
  }
  SUBCASE("the final turn removes") {
    router.prepare(kId, false);
    router.prepare(kId, true);
    CHECK(router.legacy_open_count() == 0);
    router.on_conversation_end(kId, true);
    CHECK(router.legacy_open_count() == 0);
  }
  SUBCASE("every other end discards, idempotently") {
    router.prepare(kId, false);
    router.prepare("other", false);
    router.on_conversation_end(kId, false);  // cancelled / aborted / re-homed
    CHECK(router.legacy_open_count() == 1);
    router.on_conversation_end(kId, false);
    router.on_conversation_end("never-seen", false);
    CHECK(router.legacy_open_count() == 1);
    router.clear();  // run stop / shutdown
    CHECK(router.legacy_open_count() == 0);
  }
  SUBCASE("after a discard the same id opens again (re-homed back)") {
    router.prepare(kId, false);
    router.on_conversation_end(kId, false);
    CHECK(router.prepare(kId, false).opens_session());
  }
}

TEST_CASE("1000000 conversations with random failures and cancellations end at size 0") {
  SessionRouter router(mode(SessionRoutingMode::kLegacy, 300));
  std::mt19937_64 rng(7);
  struct Slot {
    std::string id;
    int turn = 0;
    int turns = 0;
  };
  constexpr int kConversations = 1'000'000;
  constexpr size_t kInFlight = 128;
  std::vector<Slot> slots;
  std::unordered_set<std::string> opened;  // the model the router must match
  int started = 0;
  size_t max_size = 0;
  int64_t opens = 0;
  int64_t mismatches = 0;
  auto start_one = [&]() {
    Slot s;
    s.id = std::to_string(started++);
    s.turns = 1 + static_cast<int>(rng() % 4);
    s.turn = static_cast<int>(rng() % 8 == 0 ? rng() % static_cast<uint64_t>(s.turns) : 0);
    return s;
  };
  const auto t0 = std::chrono::steady_clock::now();
  while (static_cast<size_t>(started) < kInFlight) slots.push_back(start_one());
  while (!slots.empty()) {
    const size_t i = static_cast<size_t>(rng() % slots.size());
    Slot& s = slots[i];
    const bool final_turn = s.turn == s.turns - 1;
    const bool expect_open = !final_turn && opened.count(s.id) == 0;
    SessionOverlay o = router.prepare(s.id, final_turn);
    mismatches += o.opens_session() != expect_open;
    if (o.opens_session()) {
      ++opens;
      opened.insert(s.id);
    }
    if (final_turn) opened.erase(s.id);
    max_size = std::max(max_size, router.legacy_open_count());
    const uint64_t roll = rng() % 100;
    bool ended = final_turn;
    bool normal = final_turn;
    if (roll < 5) {  // dns/connect/send failure: retried as the next turn, or the end
      router.on_failed_before_server(s.id, o);
      if (o.opens_session()) opened.erase(s.id);
      if (roll < 2) {
        ended = true;
        normal = false;
      }
    } else if (roll < 8) {  // cancellation, abort after an error, re-homing
      ended = true;
      normal = false;
    }
    ++s.turn;
    if (ended) {
      router.on_conversation_end(s.id, normal);
      opened.erase(s.id);
      if (started < kConversations) {
        s = start_one();
      } else {
        s = std::move(slots.back());
        slots.pop_back();
      }
    }
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("1M conversations in " << elapsed_s << " s, " << opens << " opens, max set size "
                                 << max_size);
  CHECK(started == kConversations);
  CHECK(mismatches == 0);
  CHECK(opens > kConversations / 2);
  CHECK(max_size <= kInFlight);
  CHECK(router.legacy_open_count() == 0);
}

TEST_CASE("serialize_request applies the overlay to a copy, for every endpoint") {
  SessionRoutingSettings bind = mode(SessionRoutingMode::kBind, 300);
  SessionOverlay bind_overlay = plan_session_overlay(bind, kId, false, false);
  std::string warning;
  SUBCASE("no nvext: one is appended") {
    auto body = parse_body(R"({"model":"m","prompt":"p"})");
    std::string out = serialize_request(body, bind_overlay, &warning);
    CHECK(out ==
          R"({"model":"m","prompt":"p","nvext":{"session_control":)" + sc("bind", 300) + "}}");
    CHECK(warning.empty());
  }
  SUBCASE("chat, completions and embeddings bodies all get it") {
    for (auto endpoint : {convoy::proto::Endpoint::kChat, convoy::proto::Endpoint::kCompletions,
                          convoy::proto::Endpoint::kEmbeddings}) {
      convoy::proto::WorkerSettings ws;
      ws.endpoint = endpoint;
      convoy::proto::Turn t;
      t.user_text = "x";
      auto body = format_body(ws, "", {}, t);
      auto out = parse_body(serialize_request(body, bind_overlay, &warning));
      CAPTURE(endpoint);
      CHECK(convoy::test::to_json(out["nvext"]["session_control"]) == sc("bind", 300));
    }
  }
  SUBCASE("other nvext keys and other session_control keys are kept; computed fields win") {
    auto body = parse_body(
        R"({"model":"m","nvext":{"extra_fields":["worker_id"],"session_control":)"
        R"({"priority":2,"action":"open","timeout":5,"session_id":"old"}},"stream":true})");
    const std::string before = convoy::test::to_json(body);
    SessionControl as_sent;
    std::string out = serialize_request(body, bind_overlay, &warning, &as_sent);
    CHECK(out == R"({"model":"m","nvext":{"extra_fields":["worker_id"],"session_control":)"
                 R"({"priority":2,"action":"bind","timeout":300,"session_id":")" +
                     kId + R"("}},"stream":true})");
    // the record gets convoy's keys typed and the body's own key with its JSON value
    CHECK(session_control_json(as_sent) == sc("bind", 300));
    CHECK(as_sent.other_keys ==
          std::vector<std::pair<std::string, std::string>>{{"priority", "2"}});
    CHECK(convoy::test::to_json(body) == before);
  }
  SUBCASE("close drops a timeout, the bare form drops action and timeout") {
    auto body = parse_body(R"({"nvext":{"session_control":{"action":"bind","timeout":5,"k":1}}})");
    auto close = plan_session_overlay(bind, kId, true, false);
    auto out = parse_body(serialize_request(body, close, &warning));
    CHECK(convoy::test::to_json(out["nvext"]["session_control"]) ==
          R"({"action":"close","k":1,"session_id":")" + kId + "\"}");
    auto bare = plan_session_overlay(mode(SessionRoutingMode::kLegacy), kId, false, false);
    out = parse_body(serialize_request(body, bare, &warning));
    CHECK(convoy::test::to_json(out["nvext"]["session_control"]) ==
          R"({"k":1,"session_id":")" + kId + "\"}");
  }
  SUBCASE("a non-object nvext or session_control is replaced") {
    auto body = parse_body(R"({"nvext":7})");
    auto out = parse_body(serialize_request(body, bind_overlay, &warning));
    CHECK(convoy::test::to_json(out["nvext"]) == R"({"session_control":)" + sc("bind", 300) + "}");
    body = parse_body(R"({"nvext":{"session_control":"x","a":1}})");
    out = parse_body(serialize_request(body, bind_overlay, &warning));
    CHECK(convoy::test::to_json(out["nvext"]) ==
          R"({"session_control":)" + sc("bind", 300) + R"(,"a":1})");
  }
  SUBCASE("a shared extra_body is never mutated") {
    convoy::proto::WorkerSettings ws;
    ws.endpoint = convoy::proto::Endpoint::kChat;
    ws.extra_body_json = R"({"nvext":{"session_control":{"k":1},"extra_fields":["a"]}})";
    RequestBuilder builder(ws);
    convoy::proto::Turn t;
    t.user_text = "x";
    auto first = builder.format("", {}, t);
    const std::string before = convoy::test::to_json(first);
    serialize_request(first, bind_overlay, &warning);
    auto second = builder.format("", {}, t);
    CHECK(convoy::test::to_json(second) == before);
    CHECK(convoy::test::to_json(second["nvext"]) ==
          R"({"session_control":{"k":1},"extra_fields":["a"]})");
  }
  SUBCASE("a body that is not an object warns and is sent without the overlay") {
    auto body = parse_body(R"([1,2])");
    std::string out = serialize_request(body, bind_overlay, &warning);
    CHECK(out == "[1,2]");
    CHECK(warning.find("not a JSON object") != std::string::npos);
  }
  SUBCASE("off and header leave the body as formatted") {
    auto body = parse_body(R"({"model":"m","nvext":{"a":1}})");
    SessionOverlay header =
        plan_session_overlay(mode(SessionRoutingMode::kHeader), kId, false, true);
    SessionControl as_sent{"stale", convoy::proto::SessionAction::kOpen, 1, {}};
    CHECK(serialize_request(body, header, &warning, &as_sent) ==
          R"({"model":"m","nvext":{"a":1}})");
    CHECK_FALSE(as_sent.present());
    CHECK(serialize_request(body, SessionOverlay{}, &warning) ==
          R"({"model":"m","nvext":{"a":1}})");
    CHECK(warning.empty());
    auto array = parse_body("[]");
    CHECK(serialize_request(array, header, &warning) == "[]");
    CHECK(warning.empty());
  }
}
