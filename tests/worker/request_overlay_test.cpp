// What a request carries for Dynamo beside its prompt, on the worker's pure side: the session
// headers for each final_marker, the parent header of a sub-agent, the close request's overlay,
// verify's nvext.extra_fields in the request body and nvext.worker_id read back from streamed and
// whole replies.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>
#include <utility>
#include <vector>

#include "worker/reply_parser.hpp"
#include "worker/request_builder.hpp"
#include "worker/session_routing.hpp"

namespace proto = convoy::proto;
using namespace convoy::worker;

namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

SessionRoutingSettings header_mode(proto::FinalMarker marker) {
  SessionRoutingSettings s;
  s.mode = SessionRoutingMode::kHeader;
  s.final_marker = marker;
  return s;
}

}  // namespace

TEST_CASE("header mode: the exact headers of each turn for every final_marker") {
  const Headers plain = {{"X-Dynamo-Session-ID", "lead"}};
  const Headers final_marked = {{"X-Dynamo-Session-ID", "lead"},
                                {"X-Dynamo-Session-Final", "true"}};
  SUBCASE("off: the session id only, final turn included") {
    SessionRouter router(header_mode(proto::FinalMarker::kOff));
    CHECK(router.prepare("lead", false).headers == plain);
    CHECK(router.prepare("lead", true).headers == plain);
    CHECK_FALSE(sends_close_request(router.settings()));
    CHECK(plan_close_request_overlay(router.settings(), "lead").empty());
  }
  SUBCASE("last_turn: Session-Final on the final turn only") {
    SessionRouter router(header_mode(proto::FinalMarker::kLastTurn));
    CHECK(router.prepare("lead", false).headers == plain);
    CHECK(router.prepare("lead", true).headers == final_marked);
    CHECK_FALSE(sends_close_request(router.settings()));
  }
  SUBCASE("close_request: no marker on any turn, the extra request carries it") {
    SessionRouter router(header_mode(proto::FinalMarker::kCloseRequest));
    CHECK(router.prepare("lead", false).headers == plain);
    CHECK(router.prepare("lead", true).headers == plain);
    REQUIRE(sends_close_request(router.settings()));
    const SessionOverlay close = plan_close_request_overlay(router.settings(), "lead");
    CHECK(close.headers == final_marked);
    CHECK_FALSE(close.session_control.has_value());
  }
  SUBCASE("a configured header name carries the id; the other two names are Dynamo's") {
    SessionRoutingSettings s = header_mode(proto::FinalMarker::kLastTurn);
    s.header_name = "X-My-Session";
    CHECK(plan_session_overlay(s, "c", true, false, "p").headers ==
          Headers{{"X-My-Session", "c"},
                  {"X-Dynamo-Parent-Session-ID", "p"},
                  {"X-Dynamo-Session-Final", "true"}});
  }
}

TEST_CASE("header mode: a sub-agent names its parent, never itself") {
  for (const auto marker : {proto::FinalMarker::kOff, proto::FinalMarker::kLastTurn,
                            proto::FinalMarker::kCloseRequest}) {
    SessionRouter router(header_mode(marker));
    CHECK(router.prepare("child", false, "lead").headers ==
          Headers{{"X-Dynamo-Session-ID", "child"}, {"X-Dynamo-Parent-Session-ID", "lead"}});
    // Dynamo drops a parent equal to the session id: convoy does not send one.
    CHECK(router.prepare("same", false, "same").headers ==
          Headers{{"X-Dynamo-Session-ID", "same"}});
    CHECK(router.prepare("lead", false, "").headers == Headers{{"X-Dynamo-Session-ID", "lead"}});
  }
  const SessionOverlay close =
      plan_close_request_overlay(header_mode(proto::FinalMarker::kCloseRequest), "child", "lead");
  CHECK(close.headers == Headers{{"X-Dynamo-Session-ID", "child"},
                                 {"X-Dynamo-Parent-Session-ID", "lead"},
                                 {"X-Dynamo-Session-Final", "true"}});
}

TEST_CASE("bind and legacy: a sub-agent gets its own session and no parent or final header") {
  SessionRoutingSettings s;
  s.final_marker = proto::FinalMarker::kLastTurn;  // header mode only
  SUBCASE("bind") {
    s.mode = SessionRoutingMode::kBind;
    SessionRouter router(s);
    const SessionOverlay child = router.prepare("child", false, "lead");
    CHECK(child.headers.empty());
    CHECK(child.session_control_json == R"({"session_id":"child","action":"bind","timeout":300})");
    CHECK(router.prepare("child", true, "lead").session_control_json ==
          R"({"session_id":"child","action":"close"})");
  }
  SUBCASE("legacy: each id opens and closes on its own") {
    s.mode = SessionRoutingMode::kLegacy;
    SessionRouter router(s);
    CHECK(router.prepare("lead", false).opens_session());
    CHECK(router.prepare("child", false, "lead").opens_session());
    CHECK(router.legacy_open_count() == 2);
    CHECK(router.prepare("child", true, "lead").session_control_json ==
          R"({"session_id":"child","action":"close"})");
    CHECK(router.legacy_open_count() == 1);
    CHECK_FALSE(router.prepare("lead", false).opens_session());
  }
  CHECK_FALSE(sends_close_request(s));
}

TEST_CASE("verify: every body asks for nvext.extra_fields worker_id, merged with extra_body") {
  proto::WorkerSettings s;
  s.model = "m";
  proto::Turn t;
  t.user_text = "hi";
  auto extra_fields = [&](const proto::WorkerSettings& settings) {
    const rapidjson::Document body = format_body(settings, "", {}, t);
    std::vector<std::string> out;
    if (!body.HasMember("nvext") || !body["nvext"].HasMember("extra_fields")) return out;
    for (const auto& f : body["nvext"]["extra_fields"].GetArray()) out.emplace_back(f.GetString());
    return out;
  };
  CHECK(extra_fields(s).empty());  // verify off: no nvext at all
  SUBCASE("target.server_timing alone asks for timing only") {
    s.server_timing = true;
    CHECK(extra_fields(s) == std::vector<std::string>{"timing"});
  }
  s.session_routing.verify = true;
  CHECK(extra_fields(s) == std::vector<std::string>{"worker_id", "timing"});
  SUBCASE("kept beside what extra_body asks for, once") {
    s.extra_body_json = R"({"nvext":{"extra_fields":["timing"],"greed_sampling":true}})";
    CHECK(extra_fields(s) == std::vector<std::string>{"timing", "worker_id"});
    s.extra_body_json = R"({"nvext":{"extra_fields":["worker_id"]}})";
    CHECK(extra_fields(s) == std::vector<std::string>{"worker_id", "timing"});
    s.extra_body_json = R"({"nvext":{"greed_sampling":true}})";
    const rapidjson::Document body = format_body(s, "", {}, t);
    CHECK(body["nvext"]["greed_sampling"].GetBool());
  }
  SUBCASE("session_control lands in the same nvext") {
    s.session_routing.mode = SessionRoutingMode::kBind;
    SessionRouter router(s.session_routing);
    std::string warning;
    const std::string bytes =
        serialize_request(format_body(s, "", {}, t), router.prepare("c", false), &warning);
    rapidjson::Document sent;
    sent.Parse(bytes.c_str());
    REQUIRE(sent["nvext"].IsObject());
    REQUIRE(sent["nvext"].HasMember("extra_fields"));
    CHECK(std::string(sent["nvext"]["extra_fields"][0].GetString()) == "worker_id");
    CHECK(std::string(sent["nvext"]["session_control"]["action"].GetString()) == "bind");
  }
}

TEST_CASE("verify: nvext.worker_id is read from a streamed chunk and from a whole body") {
  std::string text;
  SUBCASE("stream: the chunk that carries nvext, decode worker first") {
    const ReplyChunk c = parse_stream_event(
        R"({"choices":[{"index":0,"delta":{"content":"x"}}],"nvext":{"worker_id":{"prefill_worker_id":7,"prefill_dp_rank":1,"decode_worker_id":9,"decode_dp_rank":3}}})",
        Endpoint::kChat, text);
    CHECK(c.has_content);
    CHECK(c.served_by.present);
    CHECK(c.served_by.worker == "9");
    CHECK(c.served_by.dp_rank == 3);
  }
  SUBCASE("stream: a chunk without nvext reports nothing") {
    const ReplyChunk c =
        parse_stream_event(R"({"choices":[{"delta":{"content":"x"}}]})", Endpoint::kChat, text);
    CHECK_FALSE(c.served_by.present);
    CHECK(c.served_by.dp_rank == -1);
  }
  SUBCASE("stream: a prefill-only report and a 64-bit id") {
    const ReplyChunk c = parse_stream_event(
        R"({"choices":[],"nvext":{"worker_id":{"prefill_worker_id":18446744073709551615}}})",
        Endpoint::kChat, text);
    CHECK(c.served_by.worker == "18446744073709551615");
    CHECK(c.served_by.dp_rank == -1);
  }
  SUBCASE("whole body, for chat and completions") {
    const ReplyChunk chat = parse_reply_body(
        R"({"choices":[{"message":{"content":"hello"}}],"nvext":{"worker_id":{"decode_worker_id":42,"decode_dp_rank":0}}})",
        Endpoint::kChat, text);
    CHECK(chat.served_by.worker == "42");
    CHECK(chat.served_by.dp_rank == 0);
    const ReplyChunk completion = parse_reply_body(
        R"({"choices":[{"text":"t"}],"nvext":{"worker_id":{"decode_worker_id":"w1"}}})",
        Endpoint::kCompletions, text);
    CHECK(completion.served_by.worker == "w1");
  }
}
