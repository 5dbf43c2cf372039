// The settings enums of protocol version 3 (and 4's final_marker): names both ways, every value
// across the wire, and an unknown value refused by decode instead of arriving as an enum nothing
// handles.
#include <doctest/doctest.h>

#include <string>

#include "proto/envelope.hpp"

using namespace convoy::proto;

namespace {

std::optional<Welcome> welcome_round_trip(const WorkerSettings& settings) {
  Welcome w;
  w.run_id = "run";
  w.settings = settings;
  const std::string bytes = encode(w);
  std::string error;
  auto decoded = decode(bytes.data(), bytes.size(), &error);
  REQUIRE_MESSAGE(decoded.has_value(), error);
  return decoded->as<Welcome>();
}

// A one-key map {key: value} converted into T: true when msgpack accepted it.
template <class T, class V>
bool converts(const char* key, const V& value) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pk(buffer);
  pk.pack_map(1);
  pk.pack(key);
  pk.pack(value);
  const auto handle = msgpack::unpack(buffer.data(), buffer.size());
  try {
    T out;
    handle.get().convert(out);
    return true;
  } catch (const msgpack::type_error&) {
    return false;
  }
}

}  // namespace

TEST_CASE(
    "protocol version 6 carries early releases and each conversation's session ledger (a "
    "version-5 controller would count releases as measured requests)") {
  CHECK(kProtocolVersion >= 6);
  Record r;
  CHECK_FALSE(session_release_only(r));
  r.early_release = true;
  CHECK(session_release_only(r));
}

TEST_CASE("a conversation carries its model and other routers' keys, range-checked") {
  CHECK(kProtocolVersion >= 7);
  Conversation c;
  c.model = "lora-a";
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, c);
  const auto handle = msgpack::unpack(buffer.data(), buffer.size());
  CHECK(handle.get().as<Conversation>().model == "lora-a");
  CHECK(converts<RoutingWrite>("source", 4));
  CHECK_FALSE(converts<RoutingWrite>("source", 5));
}

TEST_CASE("final_marker names parse back and every value survives the Welcome") {
  for (std::size_t i = 0; i < kFinalMarkerNames.size(); ++i) {
    const auto v = static_cast<FinalMarker>(i);
    CHECK(parse_final_marker(to_string(v)) == v);
    WorkerSettings s;
    s.session_routing.final_marker = v;
    auto out = welcome_round_trip(s);
    REQUIRE(out.has_value());
    CHECK(out->settings.session_routing.final_marker == v);
  }
  CHECK(to_string(FinalMarker::kLastTurn) == "last_turn");
  CHECK(to_string(FinalMarker::kCloseRequest) == "close_request");
  CHECK_FALSE(parse_final_marker("true").has_value());
  CHECK(converts<SessionRoutingSettings>("final_marker", 2));
  CHECK_FALSE(converts<SessionRoutingSettings>("final_marker", 3));
}

TEST_CASE("every settings enum name parses back to its value") {
  for (std::size_t i = 0; i < kEndpointNames.size(); ++i) {
    const auto v = static_cast<Endpoint>(i);
    CHECK(parse_endpoint(to_string(v)) == v);
  }
  for (std::size_t i = 0; i < kSessionRoutingModeNames.size(); ++i) {
    const auto v = static_cast<SessionRoutingMode>(i);
    CHECK(parse_session_routing_mode(to_string(v)) == v);
  }
  for (std::size_t i = 0; i < kHistoryModeNames.size(); ++i) {
    const auto v = static_cast<HistoryMode>(i);
    CHECK(parse_history_mode(to_string(v)) == v);
  }
  for (std::size_t i = 0; i < kSessionActionNames.size(); ++i) {
    const auto v = static_cast<SessionAction>(i);
    CHECK(parse_session_action(to_string(v)) == v);
  }
  CHECK(to_string(Endpoint::kCompletions) == "completions");
  CHECK(to_string(SessionRoutingMode::kLegacy) == "legacy");
  CHECK(to_string(HistoryMode::kRecorded) == "recorded");
  CHECK(to_string(SessionAction::kOpen) == "open");
  CHECK(to_string(SessionAction::kBare).empty());
  CHECK_FALSE(parse_endpoint("Chat").has_value());
  CHECK_FALSE(parse_endpoint("rerank").has_value());
  CHECK_FALSE(parse_session_routing_mode("sticky").has_value());
  CHECK_FALSE(parse_history_mode("").has_value());
  CHECK_FALSE(parse_session_action("unbind").has_value());
}

TEST_CASE("every endpoint, routing mode and history mode survives the Welcome") {
  for (std::size_t e = 0; e < kEndpointNames.size(); ++e) {
    // auto is resolved by the controller before the Welcome: every mode a worker can get.
    for (std::size_t m = 0; m <= static_cast<std::size_t>(SessionRoutingMode::kHeader); ++m) {
      for (std::size_t h = 0; h < kHistoryModeNames.size(); ++h) {
        WorkerSettings s;
        s.endpoint = static_cast<Endpoint>(e);
        s.session_routing.mode = static_cast<SessionRoutingMode>(m);
        s.history = static_cast<HistoryMode>(h);
        auto out = welcome_round_trip(s);
        REQUIRE(out.has_value());
        CHECK(out->settings.endpoint == s.endpoint);
        CHECK(out->settings.session_routing.mode == s.session_routing.mode);
        CHECK(out->settings.history == s.history);
      }
    }
  }
}

TEST_CASE("session_routing.mode auto never reaches a worker: the Welcome does not decode") {
  WorkerSettings s;
  s.session_routing.mode = SessionRoutingMode::kAuto;
  CHECK(to_string(SessionRoutingMode::kAuto) == "auto");
  CHECK_FALSE(welcome_round_trip(s).has_value());
}

TEST_CASE("every session action survives msgpack") {
  for (std::size_t i = 0; i < kSessionActionNames.size(); ++i) {
    const auto v = static_cast<SessionAction>(i);
    msgpack::sbuffer buffer;
    msgpack::pack(buffer, v);
    const auto handle = msgpack::unpack(buffer.data(), buffer.size());
    CHECK(handle.get().as<SessionAction>() == v);
  }
}

TEST_CASE("the whole target section and session routing travel with their values") {
  WorkerSettings s;
  s.url = "http://127.0.0.1:8000";
  s.model = "m";
  s.streaming = false;
  s.api_key_env = "KEY";
  s.headers = {{"X-A", "1"}, {"X-B", "2"}};
  s.extra_body_json = R"({"ignore_eos":true})";
  s.request_timeout_s = 12.5;
  s.connect_timeout_s = 3;
  s.use_server_token_counts = false;
  s.max_completion_tokens = true;
  s.http2 = true;
  s.insecure = true;
  s.max_response_bytes = 4096;
  s.session_routing.mode = SessionRoutingMode::kHeader;
  s.session_routing.timeout_s = 42;
  s.session_routing.header_name = "X-S";
  s.session_routing.final_marker = FinalMarker::kLastTurn;
  s.session_routing.verify = true;
  s.session_routing.dp_ranks = 4;
  s.session_routing.writes = {{true, "X-SMG-Routing-Key", convoy::proto::RoutingSource::kSession},
                              {false, "session_id", convoy::proto::RoutingSource::kDpRank}};
  s.models = {{"a", 3}, {"b", 1}};
  s.urls = {"http://127.0.0.1:8001", "http://127.0.0.1:8002"};
  s.cancel_fraction = 0.5;
  s.cancel_after_ms = 7;
  s.seed = 99;
  auto out = welcome_round_trip(s);
  REQUIRE(out.has_value());
  const WorkerSettings& o = out->settings;
  CHECK(o.url == s.url);
  CHECK(o.model == "m");
  CHECK_FALSE(o.streaming);
  CHECK(o.api_key_env == "KEY");
  CHECK(o.headers == s.headers);
  CHECK(o.extra_body_json == s.extra_body_json);
  CHECK(o.request_timeout_s == doctest::Approx(12.5));
  CHECK(o.connect_timeout_s == doctest::Approx(3));
  CHECK_FALSE(o.use_server_token_counts);
  CHECK(o.max_completion_tokens);
  CHECK(o.http2);
  CHECK(o.insecure);
  CHECK(o.max_response_bytes == 4096);
  CHECK(o.session_routing.mode == SessionRoutingMode::kHeader);
  CHECK(o.session_routing.timeout_s == 42);
  CHECK(o.session_routing.header_name == "X-S");
  CHECK(o.session_routing.dp_ranks == 4);
  REQUIRE(o.session_routing.writes.size() == 2);
  CHECK_FALSE(o.session_routing.writes[1].header);
  CHECK(o.session_routing.writes[1].source == convoy::proto::RoutingSource::kDpRank);
  REQUIRE(o.models.size() == 2);
  CHECK(o.models[1].name == "b");
  CHECK(o.session_routing.final_marker == FinalMarker::kLastTurn);
  CHECK(o.session_routing.verify);
  CHECK(o.urls == s.urls);
  CHECK(o.cancel_fraction == doctest::Approx(0.5));
  CHECK(o.cancel_after_ms == doctest::Approx(7));
  CHECK(o.seed == 99);
}

TEST_CASE("an unknown enum value on the wire fails the decode") {
  SUBCASE("in a Welcome") {
    WorkerSettings bad_endpoint;
    bad_endpoint.endpoint = static_cast<Endpoint>(5);
    CHECK_FALSE(welcome_round_trip(bad_endpoint).has_value());
    WorkerSettings bad_state;
    bad_state.responses_state = static_cast<convoy::proto::ResponsesState>(2);
    CHECK_FALSE(welcome_round_trip(bad_state).has_value());
    WorkerSettings bad_mode;
    bad_mode.session_routing.mode = static_cast<SessionRoutingMode>(4);
    CHECK_FALSE(welcome_round_trip(bad_mode).has_value());
    WorkerSettings bad_history;
    bad_history.history = static_cast<HistoryMode>(200);
    CHECK_FALSE(welcome_round_trip(bad_history).has_value());
    CHECK(welcome_round_trip(WorkerSettings{}).has_value());
  }
  SUBCASE("values past the underlying type, negative or not integers") {
    CHECK(converts<TargetSettings>("endpoint", 4));
    CHECK_FALSE(converts<TargetSettings>("endpoint", 5));
    CHECK_FALSE(converts<TargetSettings>("endpoint", 256 + 1));
    CHECK_FALSE(converts<TargetSettings>("endpoint", -1));
    CHECK_FALSE(converts<TargetSettings>("endpoint", std::string("chat")));
    CHECK(converts<SessionRoutingSettings>("mode", 3));
    CHECK_FALSE(converts<SessionRoutingSettings>("mode", 4));
    CHECK_FALSE(converts<WorkerSettings>("history", 2));
  }
  SUBCASE("a session action") {
    msgpack::sbuffer buffer;
    msgpack::pack(buffer, 4);
    const auto handle = msgpack::unpack(buffer.data(), buffer.size());
    CHECK_THROWS_AS(handle.get().as<SessionAction>(), msgpack::type_error);
  }
}

TEST_CASE("protocol version 8 carries a record's session control as a structured value") {
  CHECK(kProtocolVersion == 8);
  Record r;
  r.session_control = {"c-1", SessionAction::kOpen, 60, {{"note", R"({"k":[1,2]})"}}};
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, r);
  const msgpack::object_handle oh = msgpack::unpack(buffer.data(), buffer.size());
  const Record out = oh.get().as<Record>();
  CHECK(out.session_control.present());
  CHECK(out.session_control.session_id == "c-1");
  CHECK(out.session_control.action == SessionAction::kOpen);
  CHECK(out.session_control.timeout_s == 60);
  REQUIRE(out.session_control.other_keys.size() == 1);
  CHECK(out.session_control.other_keys[0].second == R"({"k":[1,2]})");
  // an action past the last one is refused, not cast
  msgpack::sbuffer bad;
  msgpack::packer<msgpack::sbuffer> pk(bad);
  pk.pack_map(2);
  pk.pack(std::string("session_id"));
  pk.pack(std::string("c-1"));
  pk.pack(std::string("action"));
  pk.pack(uint8_t{9});
  const msgpack::object_handle oh2 = msgpack::unpack(bad.data(), bad.size());
  CHECK_THROWS_AS(oh2.get().as<SessionControl>(), msgpack::type_error);
  // an empty session id is "none" (the records writer writes null)
  CHECK_FALSE(Record{}.session_control.present());
}
