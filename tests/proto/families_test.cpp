// Protocol 4: sub-agent families in an Assign, the family's url, and the Record fields the
// header era added, through the one-pass decoders and through salvage.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

#include "proto/envelope.hpp"
#include "proto/packed.hpp"

using namespace convoy::proto;

namespace {

Turn turn(std::string text) {
  Turn t;
  t.user_text = std::move(text);
  t.max_tokens = 4;
  return t;
}

SubAgent subagent(int32_t parent, uint32_t spawn_after_turn, std::string id, int turns) {
  SubAgent s;
  s.conversation_id = "sub-" + id;
  s.correlation_id = "corr-sub-" + id;
  s.parent = parent;
  s.spawn_after_turn = spawn_after_turn;
  s.system_prompt = "you are " + id;
  for (int k = 0; k < turns; ++k) s.turns.push_back(turn(id + " turn " + std::to_string(k)));
  return s;
}

Conversation family(uint64_t index) {
  Conversation c;
  c.index = index;
  c.conversation_id = "lead-" + std::to_string(index);
  c.correlation_id = "corr-" + std::to_string(index);
  c.turns = {turn("lead 0"), turn("lead 1"), turn("lead 2")};
  c.subagents = {subagent(-1, 1, "a", 2), subagent(0, 2, "b", 1), subagent(-1, 3, "c", 1)};
  c.url_index = 2;
  return c;
}

void check_same_subagent(const SubAgent& a, const SubAgent& b) {
  CHECK(a.conversation_id == b.conversation_id);
  CHECK(a.correlation_id == b.correlation_id);
  CHECK(a.parent == b.parent);
  CHECK(a.spawn_after_turn == b.spawn_after_turn);
  CHECK(a.system_prompt == b.system_prompt);
  REQUIRE(a.turns.size() == b.turns.size());
  for (size_t i = 0; i < a.turns.size(); ++i) CHECK(a.turns[i].user_text == b.turns[i].user_text);
}

void check_same_family(const Conversation& a, const Conversation& b) {
  CHECK(a.index == b.index);
  CHECK(a.url_index == b.url_index);
  REQUIRE(a.subagents.size() == b.subagents.size());
  for (size_t i = 0; i < a.subagents.size(); ++i)
    check_same_subagent(a.subagents[i], b.subagents[i]);
}

using convoy::test::packed;

}  // namespace

TEST_CASE("an Assign of sub-agent families and their url survives a round trip") {
  Assign a{3, {family(1), family(2)}, false, {}};
  const std::string bytes = encode(a);
  std::string error;
  auto decoded = decode(bytes.data(), bytes.size(), &error);
  REQUIRE_MESSAGE(decoded.has_value(), error);
  auto out = decoded->as<Assign>();
  REQUIRE(out.has_value());
  REQUIRE(out->conversations.size() == 2);
  check_same_family(out->conversations[0], a.conversations[0]);
  check_same_family(out->conversations[1], a.conversations[1]);
  CHECK(out->conversations[1].subagents[1].parent == 0);
  CHECK(out->conversations[1].subagents[2].spawn_after_turn == 3);
  // Re-encoding gives the same bytes (what the fuzzer checks for every message).
  CHECK(encode(*out) == bytes);
}

TEST_CASE("sub-agents decode by key exactly as msgpack's generic map conversion does") {
  const SubAgent s = subagent(4, 7, "x", 3);
  msgpack::sbuffer body;
  msgpack::pack(body, s);
  msgpack::object_handle oh = msgpack::unpack(body.data(), body.size());
  const SubAgent fast = oh.get().as<SubAgent>();
  SubAgent generic;
  generic.msgpack_unpack(oh.get());  // MSGPACK_DEFINE_MAP's own decoder
  check_same_subagent(fast, s);
  check_same_subagent(fast, generic);

  SUBCASE("missing keys keep their defaults, unknown keys are skipped") {
    msgpack::sbuffer partial;
    msgpack::packer<msgpack::sbuffer> pk(partial);
    pk.pack_map(2);
    pk.pack(std::string("correlation_id"));
    pk.pack(std::string("only"));
    pk.pack(std::string("from_a_newer_controller"));
    pk.pack(1);
    msgpack::object_handle poh = msgpack::unpack(partial.data(), partial.size());
    const SubAgent p = poh.get().as<SubAgent>();
    CHECK(p.correlation_id == "only");
    CHECK(p.parent == -1);
    CHECK(p.spawn_after_turn == 1);
    CHECK(p.turns.empty());
  }
  SUBCASE("a value of the wrong type is an error") {
    msgpack::sbuffer bad;
    msgpack::packer<msgpack::sbuffer> pk(bad);
    pk.pack_map(1);
    pk.pack(std::string("parent"));
    pk.pack(std::string("lead"));
    msgpack::object_handle boh = msgpack::unpack(bad.data(), bad.size());
    CHECK_THROWS(boh.get().as<SubAgent>());
  }
}

TEST_CASE("records carry subagent, url_index, served_by, dp_rank and close_request") {
  Record r;
  r.x_request_id = "r";
  r.subagent = 3;
  r.url_index = 1;
  r.served_by = "7587890000000000001";
  r.dp_rank = 2;
  r.close_request = true;
  msgpack::sbuffer body;
  msgpack::pack(body, r);
  msgpack::object_handle oh = msgpack::unpack(body.data(), body.size());
  const Record fast = oh.get().as<Record>();
  Record generic;
  generic.msgpack_unpack(oh.get());
  for (const Record* out : std::initializer_list<const Record*>{&fast, &generic}) {
    CHECK(out->subagent == 3);
    CHECK(out->url_index == 1);
    CHECK(out->served_by == "7587890000000000001");
    CHECK(out->dp_rank == 2);
    CHECK(out->close_request);
  }
  const std::string empty = packed(Record{});
  const Record defaults = msgpack::unpack(empty.data(), empty.size()).get().as<Record>();
  CHECK(defaults.subagent == -1);
  CHECK(defaults.dp_rank == -1);
  CHECK(defaults.served_by.empty());
  CHECK_FALSE(defaults.close_request);
}

TEST_CASE("salvage keeps the families that decode and names the one whose sub-agent does not") {
  Conversation bad = family(11);
  bad.subagents[1].turns[0].user_text = std::string(17u << 20, 'x');  // over the string limit
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> pk(body);
  pk.pack_map(2);
  pk.pack("batch");
  pk.pack(uint64_t{9});
  pk.pack("conversations");
  pk.pack_array(3);
  for (const Conversation& c : {family(10), bad, family(12)}) {
    const std::string p = packed(c);
    body.write(p.data(), p.size());
  }
  const std::string bytes = encode_raw(MsgType::kAssign, body, kProtocolVersion);
  REQUIRE_FALSE(decode(bytes.data(), bytes.size(), nullptr).has_value());

  auto s = salvage_assign(bytes.data(), bytes.size());
  REQUIRE(s.has_value());
  CHECK(s->batch == 9);
  REQUIRE(s->conversations.size() == 2);
  check_same_family(s->conversations[0], family(10));
  check_same_family(s->conversations[1], family(12));
  REQUIRE(s->failed.size() == 1);
  CHECK(s->failed[0].conversation_index == 11);
  CHECK(s->failed[0].error.find("undecodable assignment") != std::string::npos);
  CHECK_FALSE(s->undecodable.has_value());
}
