#include <doctest/doctest.h>

#include <string>

#include "proto/envelope.hpp"

using namespace convoy::proto;

namespace {

template <class T>
T round_trip(const T& msg) {
  std::string bytes = encode(msg);
  std::string error;
  auto decoded = decode(bytes.data(), bytes.size(), &error);
  REQUIRE_MESSAGE(decoded.has_value(), error);
  CHECK(decoded->version == kProtocolVersion);
  CHECK(decoded->type == TypeOf<T>::value);
  auto out = decoded->template as<T>();
  REQUIRE(out.has_value());
  return *out;
}

Record sample_record() {
  Record r;
  r.x_request_id = "req-1";
  r.x_correlation_id = "c0ffee00-0000-4000-8000-000000000001";
  r.conversation_id = "conv-7";
  r.conversation_index = 7;
  r.turn_index = 2;
  r.final_turn = true;
  r.phase = Phase::kWarmup;
  r.intended_ns = 1;
  r.sent_ns = 2;
  r.first_byte_ns = 3;
  r.first_token_ns = 4;
  r.second_token_ns = 5;
  r.last_token_ns = 6;
  r.end_ns = 7;
  r.chunk_gaps_ns = {10, 20, 30};
  r.input_tokens = 128;
  r.output_tokens = 32;
  r.cached_tokens = 64;
  r.usage_from_server = true;
  r.http_status = 400;
  r.error = {ErrorKind::kHttpStatus, 400, "Bad Request", "unknown variant `bind`"};
  r.session_control = {"x", convoy::proto::SessionAction::kBind, 300, {{"priority", "2"}}};
  return r;
}

}  // namespace

TEST_CASE("every message survives a round trip") {
  SUBCASE("hello") {
    Hello h{kProtocolVersion, "w1", "host-a", 1234};
    auto out = round_trip(h);
    CHECK(out.worker_id == "w1");
    CHECK(out.host == "host-a");
    CHECK(out.pid == 1234);
  }
  SUBCASE("welcome") {
    Welcome w;
    w.run_id = "run";
    w.results_endpoint = "tcp://127.0.0.1:5000";
    w.settings.url = "http://127.0.0.1:8000";
    w.settings.headers = {{"X-A", "1"}, {"X-B", "2"}};
    w.settings.session_routing.mode = SessionRoutingMode::kLegacy;
    w.settings.session_routing.timeout_s = 77;
    w.settings.cancel_fraction = 0.25;
    w.token = "0123456789abcdef";
    auto out = round_trip(w);
    CHECK(out.token == w.token);
    CHECK(out.results_endpoint == w.results_endpoint);
    CHECK(out.settings.headers == w.settings.headers);
    CHECK(out.settings.session_routing.mode == SessionRoutingMode::kLegacy);
    CHECK(out.settings.session_routing.timeout_s == 77);
    CHECK(out.settings.cancel_fraction == doctest::Approx(0.25));
  }
  SUBCASE("reject, stop, bye") {
    CHECK(round_trip(Reject{"version"}).reason == "version");
    CHECK(round_trip(Stop{true}).cancel);
    auto bye = round_trip(Bye{"w1", "secret", "done", 0});
    CHECK(bye.worker_id == "w1");
    CHECK(bye.token == "secret");
    CHECK(bye.reason == "done");
  }
  SUBCASE("ping and pong") {
    CHECK(round_trip(Ping{9, -5}).controller_send_ns == -5);
    auto p = round_trip(Pong{9, 1, 2, 3});
    CHECK(p.seq == 9);
    CHECK(p.worker_recv_ns == 2);
    CHECK(p.worker_send_ns == 3);
  }
  SUBCASE("heartbeat") {
    Heartbeat hb{5, 6, 7, 8, 42.5, 1 << 20};
    auto out = round_trip(hb);
    CHECK(out.legacy_open_sessions == 8);
    CHECK(out.cpu_percent == doctest::Approx(42.5));
  }
  SUBCASE("assign") {
    Conversation c;
    c.index = 3;
    c.correlation_id = "id";
    c.phase = Phase::kWarmup;
    c.start_ns = 123456789;
    c.turns = {Turn{"hello", "", 16, 2, 0, R"({"nvext":{}})", ""},
               Turn{"again", "", 8, 2, 50, "", "r"}};
    Assign a{17, {c, c}, false, {}};
    auto out = round_trip(a);
    CHECK(out.batch == 17);
    REQUIRE(out.conversations.size() == 2);
    CHECK(out.conversations[1].turns[1].delay_ms == doctest::Approx(50));
    CHECK(out.conversations[0].turns[0].extra_json == R"({"nvext":{}})");
    CHECK(out.conversations[0].phase == Phase::kWarmup);
  }
  SUBCASE("results") {
    Results res;
    res.worker_id = "w2";
    res.token = "t";
    res.records = {sample_record()};
    res.ended = {ConversationEnd{7, EndReason::kAborted}};
    res.failed = {FailedConversation{8, "undecodable assignment: str size overflow"}};
    res.undecodable = {UndecodableAssign{3, {1, 4}, 6, "why"}};
    auto out = round_trip(res);
    CHECK(out.token == "t");
    REQUIRE(out.failed.size() == 1);
    CHECK(out.failed[0].conversation_index == 8);
    CHECK(out.failed[0].error == res.failed[0].error);
    REQUIRE(out.undecodable.size() == 1);
    CHECK(out.undecodable[0].batch == 3);
    CHECK(out.undecodable[0].positions == std::vector<uint32_t>{1, 4});
    CHECK(out.undecodable[0].unreadable_from == 6);
    REQUIRE(out.records.size() == 1);
    const Record& r = out.records[0];
    CHECK(r.chunk_gaps_ns == std::vector<int64_t>{10, 20, 30});
    CHECK(r.error.kind == ErrorKind::kHttpStatus);
    CHECK(r.error.message == "unknown variant `bind`");
    CHECK(r.cached_tokens == 64);
    CHECK(r.session_control.session_id == "x");
    CHECK(r.session_control.action == convoy::proto::SessionAction::kBind);
    CHECK(r.session_control.timeout_s == 300);
    CHECK(r.session_control.other_keys ==
          std::vector<std::pair<std::string, std::string>>{{"priority", "2"}});
    CHECK(r.final_turn);
    CHECK(r.phase == Phase::kWarmup);
    CHECK(out.ended[0].reason == EndReason::kAborted);
  }
}

TEST_CASE("decode rejects garbage, truncation and oversized input") {
  std::string error;
  SUBCASE("random bytes") {
    std::string junk = "\xc1\xff\x00garbage";
    CHECK_FALSE(decode(junk.data(), junk.size(), &error).has_value());
    CHECK_FALSE(error.empty());
  }
  SUBCASE("empty") { CHECK_FALSE(decode("", 0, &error).has_value()); }
  SUBCASE("truncated at every length") {
    Results res;
    res.worker_id = "w";
    res.records = {sample_record()};
    std::string bytes = encode(res);
    for (size_t n = 0; n < bytes.size(); ++n) {
      CHECK_FALSE(decode(bytes.data(), n, &error).has_value());
    }
  }
  SUBCASE("oversized") {
    std::string bytes = encode(Hello{});
    CHECK_FALSE(decode(bytes.data(), bytes.size(), &error, bytes.size() - 1).has_value());
    CHECK(error.find("exceeds") != std::string::npos);
  }
  SUBCASE("not an envelope") {
    msgpack::sbuffer buf;
    msgpack::pack(buf, std::vector<int>{1, 2, 3});
    CHECK_FALSE(decode(buf.data(), buf.size(), &error).has_value());
  }
  SUBCASE("unknown type") {
    msgpack::sbuffer body;
    msgpack::pack(body, Bye{});
    std::string bytes = encode_raw(static_cast<MsgType>(200), body, kProtocolVersion);
    CHECK_FALSE(decode(bytes.data(), bytes.size(), &error).has_value());
    CHECK(error.find("unknown message type") != std::string::npos);
  }
  SUBCASE("trailing bytes") {
    std::string bytes = encode(Bye{"w", "t", "x", 0}) + "z";
    CHECK_FALSE(decode(bytes.data(), bytes.size(), &error).has_value());
  }
  SUBCASE("body of the wrong shape converts to nullopt, not a crash") {
    msgpack::sbuffer body;
    msgpack::pack(body, std::string("not a map"));
    std::string bytes = encode_raw(MsgType::kResults, body, kProtocolVersion);
    auto d = decode(bytes.data(), bytes.size(), &error);
    REQUIRE(d.has_value());
    CHECK_FALSE(d->as<Results>().has_value());
  }
  SUBCASE("a newer protocol version is visible to the caller") {
    std::string bytes = encode(Hello{}, kProtocolVersion + 1);
    auto d = decode(bytes.data(), bytes.size(), &error);
    REQUIRE(d.has_value());
    CHECK(d->version == kProtocolVersion + 1);
  }
}

namespace {

// A msgpack map with one string-valued member, unpacked.
msgpack::object_handle one_string_member(const std::string& key, const std::string& value) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pk(buffer);
  pk.pack_map(1);
  pk.pack(key);
  pk.pack(value);
  return msgpack::unpack(buffer.data(), buffer.size());
}

}  // namespace

TEST_CASE("records decode by key: unknown keys are skipped, missing keys keep defaults") {
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> pk(body);
  pk.pack_map(4);
  pk.pack(std::string("turn_index"));
  pk.pack(3);
  pk.pack(std::string("a_key_from_a_newer_worker"));
  pk.pack(std::vector<int>{1, 2});
  pk.pack(std::string("x_request_id"));
  pk.pack(std::string("r-1"));
  pk.pack(std::string("chunk_gaps_ns"));
  pk.pack(std::vector<int64_t>{5, 6});
  msgpack::object_handle oh = msgpack::unpack(body.data(), body.size());
  Record r = oh.get().as<Record>();
  CHECK(r.turn_index == 3);
  CHECK(r.x_request_id == "r-1");
  CHECK(r.chunk_gaps_ns == std::vector<int64_t>{5, 6});
  CHECK(r.cached_tokens == -1);
  CHECK(r.error.kind == ErrorKind::kNone);

  SUBCASE("a value of the wrong type is an error, not a silent default") {
    CHECK_THROWS(one_string_member("turn_index", "three").get().as<Record>());
  }
}

namespace {

void check_same_turn(const Turn& a, const Turn& b) {
  CHECK(a.user_text == b.user_text);
  CHECK(a.messages_json == b.messages_json);
  CHECK(a.max_tokens == b.max_tokens);
  CHECK(a.input_tokens_est == b.input_tokens_est);
  CHECK(a.delay_ms == b.delay_ms);
  CHECK(a.extra_json == b.extra_json);
  CHECK(a.recorded_reply == b.recorded_reply);
}

void check_same_conversation(const Conversation& a, const Conversation& b) {
  CHECK(a.index == b.index);
  CHECK(a.conversation_id == b.conversation_id);
  CHECK(a.correlation_id == b.correlation_id);
  CHECK(a.phase == b.phase);
  CHECK(a.start_ns == b.start_ns);
  CHECK(a.first_turn == b.first_turn);
  CHECK(a.system_prompt == b.system_prompt);
  REQUIRE(a.turns.size() == b.turns.size());
  for (size_t i = 0; i < a.turns.size(); ++i) check_same_turn(a.turns[i], b.turns[i]);
}

}  // namespace

TEST_CASE("conversations decode by key exactly as msgpack's generic map conversion does") {
  Conversation c;
  c.index = 77;
  c.conversation_id = "conv-77";
  c.correlation_id = "corr-77";
  c.phase = Phase::kWarmup;
  c.start_ns = -42;
  c.first_turn = 1;
  c.system_prompt = "be brief";
  c.turns = {Turn{"hi", R"([{"role":"user","content":"x"}])", 16, 3, 12.5, R"({"a":1})", "ok"},
             Turn{"again", "", 0, 0, 0, "", ""}};
  msgpack::sbuffer body;
  msgpack::pack(body, c);
  msgpack::object_handle oh = msgpack::unpack(body.data(), body.size());

  const Conversation fast = oh.get().as<Conversation>();
  Conversation generic;
  generic.msgpack_unpack(oh.get());  // MSGPACK_DEFINE_MAP's own decoder
  check_same_conversation(fast, c);
  check_same_conversation(fast, generic);

  SUBCASE("unknown keys are skipped, missing keys keep their defaults") {
    msgpack::sbuffer partial;
    msgpack::packer<msgpack::sbuffer> pk(partial);
    pk.pack_map(3);
    pk.pack(std::string("correlation_id"));
    pk.pack(std::string("abc"));
    pk.pack(std::string("a_key_from_a_newer_controller"));
    pk.pack_map(0);
    pk.pack(std::string("turns"));
    pk.pack_array(1);
    pk.pack_map(1);
    pk.pack(std::string("user_text"));
    pk.pack(std::string("hello"));
    msgpack::object_handle poh = msgpack::unpack(partial.data(), partial.size());
    const Conversation p = poh.get().as<Conversation>();
    CHECK(p.correlation_id == "abc");
    CHECK(p.phase == Phase::kMeasure);
    REQUIRE(p.turns.size() == 1);
    CHECK(p.turns[0].user_text == "hello");
    CHECK(p.turns[0].max_tokens == 0);
  }
  SUBCASE("a value of the wrong type is an error") {
    CHECK_THROWS(one_string_member("turns", "not a list").get().as<Conversation>());
  }
}
