// session_routing.mode auto: the probe's answer decides the mode, its body is
// minimal and carries a body bind, and resolve_session_routing turns embeddings into off.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>

#include "controller/run/session_detect.hpp"
#include "test_util.hpp"

using namespace convoy::controller;
using convoy::Config;
using convoy::parse_config;
using convoy::proto::SessionRoutingMode;
using convoy::test::parse_json;
using convoy::test::to_json;

namespace {

// Dynamo's 400 bodies as its frontends send them (the text after the status is serde's).
const char* const kLegacyBody =
    R"({"error":{"message":"Failed to deserialize the JSON body into the target type: nvext.session_control.action: unknown variant `bind`, expected `open` or `close` at line 1 column 187","type":"Bad Request","code":400}})";
const char* const kHeaderBody =
    R"({"error":{"message":"Failed to deserialize the JSON body into the target type: nvext: unknown field `session_control`, expected one of `ignore_eos`, `top_k` at line 1 column 150","type":"Bad Request","code":400}})";

}  // namespace

TEST_CASE("auto: the probe's answer names the contract") {
  SUBCASE("2xx: bind") {
    const Detection d = classify_session_probe({200, R"({"choices":[]})", ""});
    CHECK(d.ok);
    CHECK(d.mode == SessionRoutingMode::kBind);
    CHECK(d.meaning.find("HTTP 200") != std::string::npos);
  }
  SUBCASE("unknown variant bind: legacy") {
    const Detection d = classify_session_probe({400, kLegacyBody, ""});
    CHECK(d.ok);
    CHECK(d.mode == SessionRoutingMode::kLegacy);
    CHECK(d.meaning.find("unknown variant `bind`") != std::string::npos);
  }
  SUBCASE("unknown field session_control: header") {
    const Detection d = classify_session_probe({400, kHeaderBody, ""});
    CHECK(d.ok);
    CHECK(d.mode == SessionRoutingMode::kHeader);
    CHECK(d.meaning.find("unknown field `session_control`") != std::string::npos);
  }
}

TEST_CASE("auto: any other answer decides nothing and is quoted") {
  SUBCASE("a 404") {
    const Detection d = classify_session_probe({404, "model not found\n", ""});
    CHECK_FALSE(d.ok);
    CHECK(d.meaning == "HTTP 404: \"model not found\", which names none of bind, legacy or header");
  }
  SUBCASE("a 500 that mentions bind") {
    const Detection d = classify_session_probe({500, kLegacyBody, ""});
    CHECK_FALSE(d.ok);  // only a client error says what the frontend refused
  }
  SUBCASE("no answer") {
    const Detection d = classify_session_probe({0, "", "Connection refused"});
    CHECK_FALSE(d.ok);
    CHECK(d.meaning == "no answer: Connection refused");
  }
}

TEST_CASE("auto: the probe body is one short request with a body bind") {
  convoy::proto::TargetSettings t;
  t.model = "Qwen/Qwen3-0.6B";
  t.extra_body_json = R"({"ignore_eos":true,"nvext":{"extra_fields":["worker_id"]},"stream":true})";
  SUBCASE("chat") {
    const auto body = parse_json(session_probe_body(t, "probe-1", "bind", 300));
    CHECK(std::string(body["model"].GetString()) == "Qwen/Qwen3-0.6B");
    CHECK(body["messages"].Size() == 1);
    CHECK(body["max_tokens"].GetInt() == 1);
    CHECK_FALSE(body["stream"].GetBool());
    CHECK(body["ignore_eos"].GetBool());  // target.extra_body is kept
    CHECK(
        to_json(body["nvext"]) ==
        R"({"extra_fields":["worker_id"],"session_control":{"session_id":"probe-1","action":"bind","timeout":300}})");
  }
  SUBCASE("completions, max_completion_tokens, close") {
    t.endpoint = convoy::proto::Endpoint::kCompletions;
    t.max_completion_tokens = true;
    const auto body = parse_json(session_probe_body(t, "probe-1", "close", 300));
    CHECK(body.HasMember("prompt"));
    CHECK_FALSE(body.HasMember("messages"));
    CHECK(body["max_completion_tokens"].GetInt() == 1);
    CHECK(to_json(body["nvext"]["session_control"]) ==
          R"({"session_id":"probe-1","action":"close"})");
  }
}

TEST_CASE("auto: the probe goes to the endpoint's route") {
  CHECK(probe_endpoint_url("http://h:8000", convoy::proto::Endpoint::kChat) ==
        "http://h:8000/v1/chat/completions");
  CHECK(probe_endpoint_url("http://h:8000/v1/", convoy::proto::Endpoint::kCompletions) ==
        "http://h:8000/v1/completions");
}

TEST_CASE("session routing on embeddings resolves to off and probes nothing") {
  Config c;
  c.target.endpoint = convoy::proto::Endpoint::kEmbeddings;
  c.session_routing.mode = SessionRoutingMode::kAuto;
  SessionLedger ledger;
  // An unroutable URL: a probe would fail; none is sent.
  CHECK(resolve_session_routing(c, {"http://127.0.0.1:9"}, ledger).empty());
  CHECK(c.session_routing.mode == SessionRoutingMode::kOff);
  CHECK(ledger.configured == SessionRoutingMode::kAuto);
  CHECK(ledger.mode == SessionRoutingMode::kOff);
  CHECK(ledger.detected_by.empty());
  CHECK_FALSE(ledger.tracked);
}

TEST_CASE("auto against a target that does not answer exits before any traffic") {
  Config c;
  c.session_routing.mode = SessionRoutingMode::kAuto;
  c.target.connect_timeout_s = 2;
  SessionLedger ledger;
  const std::string error = resolve_session_routing(c, {"http://127.0.0.1:9"}, ledger);
  CHECK(error.find("session_routing.mode auto: the probe of http://127.0.0.1:9/v1/chat/"
                   "completions decides nothing: no answer") == 0);
  CHECK(error.find("Nothing else was sent.") != std::string::npos);
  CHECK(ledger.probe_http_status == 0);
}

TEST_CASE("the session ledger counts releases apart and says what was left open") {
  SessionLedger ledger;
  ledger.configured = SessionRoutingMode::kAuto;
  ledger.mode = SessionRoutingMode::kBind;
  ledger.tracked = true;
  ledger.detected_by = "probe";
  convoy::proto::ConversationEnd end;
  end.sessions_opened = 2;
  end.sessions_left_open = 1;
  ledger.add_end(end);
  convoy::proto::Record r;
  ledger.add_record(r);  // a turn: not a release
  r.early_release = true;
  r.http_status = 200;
  ledger.add_record(r);
  r.http_status = 0;
  ledger.add_record(r);
  const auto json = parse_json(ledger.json());
  CHECK(std::string(json["configured"].GetString()) == "auto");
  CHECK(std::string(json["mode"].GetString()) == "bind");
  CHECK(std::string(json["detected_by"].GetString()) == "probe");
  CHECK(
      to_json(json["sessions"]) ==
      R"({"tracked":true,"opened":2,"closed":1,"releases_sent":2,"releases_failed":1,"left_open":1,"conversations_reported":1})");
  CHECK(ledger.console_line() ==
        "sessions (bind): 2 opened, 2 released early (1 failed), 1 left open at the server");
}

TEST_CASE("session routing on embeddings is a validation warning naming file, line and key") {
  const Config c =
      parse_config("target:\n  endpoint: embeddings\nsession_routing:\n  mode: auto\n", "c.yaml");
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("c.yaml:4") != std::string::npos);
  CHECK(c.warnings[0].find("session_routing.mode") != std::string::npos);
  CHECK(c.warnings[0].find("nothing is overlaid") != std::string::npos);
  CHECK(parse_config("target:\n  endpoint: chat\nsession_routing:\n  mode: auto\n", "c.yaml")
            .warnings.empty());
}

TEST_CASE("final_marker may go with auto (it applies when header is learned)") {
  const Config c =
      parse_config("session_routing:\n  mode: auto\n  final_marker: close_request\n", "c.yaml");
  CHECK(c.session_routing.mode == SessionRoutingMode::kAuto);
  CHECK(c.session_routing.final_marker == convoy::proto::FinalMarker::kCloseRequest);
}
