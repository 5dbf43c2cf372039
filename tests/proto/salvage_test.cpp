// An Assign that does not decode as a whole: every conversation that decodes on its own is
// kept, the others are named by index (or by position when even the index is unreadable).
#include <doctest/doctest.h>

#include <string>

#include "proto/envelope.hpp"
#include "proto/packed.hpp"

using namespace convoy::proto;

namespace {

Conversation conversation(uint64_t index, std::string text = "hi") {
  Conversation c;
  c.index = index;
  c.correlation_id = "corr-" + std::to_string(index);
  Turn t;
  t.user_text = std::move(text);
  t.max_tokens = 4;
  c.turns.push_back(t);
  return c;
}

// An Assign envelope whose conversations are the given, already packed msgpack objects.
std::string assign_of(uint64_t batch, const std::vector<std::string>& packed_conversations,
                      uint32_t claimed_count = UINT32_MAX) {
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> pk(body);
  pk.pack_map(2);
  pk.pack("batch");
  pk.pack(batch);
  pk.pack("conversations");
  pk.pack_array(claimed_count == UINT32_MAX ? static_cast<uint32_t>(packed_conversations.size())
                                            : claimed_count);
  for (const auto& c : packed_conversations) body.write(c.data(), c.size());
  return encode_raw(MsgType::kAssign, body, kProtocolVersion);
}

using convoy::test::packed;

}  // namespace

TEST_CASE(
    "salvage keeps the conversations of a batch that decode and names the one that does not") {
  // A turn over the 16 MiB string limit fails the whole message in decode(); the two others
  // of the batch must survive it.
  const std::string huge(17u << 20, 'x');
  const std::string bytes = assign_of(
      5, {packed(conversation(10)), packed(conversation(11, huge)), packed(conversation(12))});
  std::string error;
  REQUIRE_FALSE(decode(bytes.data(), bytes.size(), &error).has_value());
  CHECK(error.find("str size overflow") != std::string::npos);

  auto s = salvage_assign(bytes.data(), bytes.size());
  REQUIRE(s.has_value());
  CHECK(s->batch == 5);
  REQUIRE(s->conversations.size() == 2);
  CHECK(s->conversations[0].index == 10);
  CHECK(s->conversations[1].index == 12);
  CHECK(s->conversations[1].turns.at(0).user_text == "hi");
  REQUIRE(s->failed.size() == 1);
  CHECK(s->failed[0].conversation_index == 11);
  CHECK(s->failed[0].error.find("str size overflow") != std::string::npos);
  CHECK_FALSE(s->undecodable.has_value());
}

TEST_CASE("salvage names a conversation of the wrong shape by its index") {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> pk(b);
  pk.pack_map(2);
  pk.pack("index");
  pk.pack(uint64_t{7});
  pk.pack("turns");
  pk.pack(42);  // not an array of turns
  const std::string bad(b.data(), b.size());
  const std::string bytes = assign_of(2, {packed(conversation(6)), bad});
  auto d = decode(bytes.data(), bytes.size(), nullptr);
  REQUIRE(d.has_value());
  CHECK_FALSE(d->as<Assign>().has_value());

  auto s = salvage_assign(bytes.data(), bytes.size());
  REQUIRE(s.has_value());
  REQUIRE(s->conversations.size() == 1);
  CHECK(s->conversations[0].index == 6);
  REQUIRE(s->failed.size() == 1);
  CHECK(s->failed[0].conversation_index == 7);
}

TEST_CASE("salvage names by position what has no readable index") {
  SUBCASE("an element that is not a map") {
    const std::string bytes =
        assign_of(3, {packed(conversation(1)), packed(12345), packed(conversation(2))});
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK(s->conversations.size() == 2);
    CHECK(s->failed.empty());
    REQUIRE(s->undecodable.has_value());
    CHECK(s->undecodable->batch == 3);
    CHECK(s->undecodable->positions == std::vector<uint32_t>{1});
    CHECK(s->undecodable->unreadable_from == -1);
  }
  SUBCASE("an array that claims more elements than the bytes hold") {
    const std::string bytes = assign_of(4, {packed(conversation(1))}, /*claimed_count=*/3);
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK(s->conversations.size() == 1);
    REQUIRE(s->undecodable.has_value());
    CHECK(s->undecodable->batch == 4);
    CHECK(s->undecodable->unreadable_from == 1);
  }
  SUBCASE("a body cut short before its conversations") {
    msgpack::sbuffer body;
    msgpack::packer<msgpack::sbuffer> pk(body);
    pk.pack_map(2);
    pk.pack("batch");
    pk.pack(9);
    pk.pack("conversa");  // the bytes end inside the second key
    std::string bytes = encode_raw(MsgType::kAssign, body, kProtocolVersion);
    bytes.resize(bytes.size() - 3);
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    REQUIRE(s->undecodable.has_value());
    CHECK(s->undecodable->batch == 9);
    CHECK(s->undecodable->unreadable_from == 0);
  }
  SUBCASE("a body without conversations is an empty batch, as decode reads it") {
    msgpack::sbuffer body;
    msgpack::pack(body, std::map<std::string, int>{{"batch", 9}});
    const std::string bytes = encode_raw(MsgType::kAssign, body, kProtocolVersion);
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK(s->conversations.empty());
    CHECK_FALSE(s->undecodable.has_value());
  }
  SUBCASE("a batch number that cannot be read is 0: the worker supplies the next one") {
    msgpack::sbuffer body;
    msgpack::packer<msgpack::sbuffer> pk(body);
    pk.pack_map(2);
    pk.pack("batch");
    pk.pack("seven");
    pk.pack("conversations");
    pk.pack(std::vector<Conversation>{conversation(1)});
    const std::string bytes = encode_raw(MsgType::kAssign, body, kProtocolVersion);
    auto d = decode(bytes.data(), bytes.size(), nullptr);
    REQUIRE(d.has_value());
    CHECK_FALSE(d->as<Assign>().has_value());
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK(s->batch == 0);
    REQUIRE(s->conversations.size() == 1);
    CHECK(s->conversations[0].index == 1);
    CHECK_FALSE(s->undecodable.has_value());
  }
}

TEST_CASE("salvage steps over every msgpack format it meets on the way") {
  // Unknown keys before the conversations, and inside one, holding each kind of value: the
  // walk must delimit all of them exactly to find what follows.
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> pk(body);
  pk.pack_map(14);
  pk.pack("nil");
  pk.pack_nil();
  pk.pack("bools");
  pk.pack_array(2);
  pk.pack_true();
  pk.pack_false();
  pk.pack("ints");
  pk.pack(std::vector<int64_t>{0, 127, 128, 255, 256, 65535, 65536, 1ll << 40, -1, -32, -33, -128,
                               -129, -32768, -32769, -(1ll << 40)});
  pk.pack("floats");
  pk.pack_array(2);
  pk.pack_float(1.5f);
  pk.pack_double(2.5);
  pk.pack("strs");
  pk.pack(std::vector<std::string>{"", std::string(31, 'a'), std::string(32, 'b'),
                                   std::string(300, 'c'), std::string(70000, 'd')});
  pk.pack("bin");
  pk.pack_bin(3);
  pk.pack_bin_body("\x01\x02\x03", 3);
  pk.pack("bin16");
  pk.pack_bin(300);
  pk.pack_bin_body(std::string(300, '\0').data(), 300);
  pk.pack("fixext");
  pk.pack_ext(4, 1);
  pk.pack_ext_body("abcd", 4);
  pk.pack("ext8");
  pk.pack_ext(5, 2);
  pk.pack_ext_body("abcde", 5);
  pk.pack("ext16");
  pk.pack_ext(300, 3);
  pk.pack_ext_body(std::string(300, 'e').data(), 300);
  pk.pack("nested");
  pk.pack(std::map<std::string, std::vector<std::map<std::string, int>>>{
      {"a", {{{"x", 1}}, {{"y", 2}}}}});
  pk.pack("big array");
  pk.pack(std::vector<int>(20, 1));
  pk.pack("big map");
  std::map<int, int> m;
  for (int i = 0; i < 20; ++i) m[i] = i;
  pk.pack(m);
  pk.pack("conversations");
  pk.pack_array(2);
  // An element with an unknown key of every size class before its index, and a bad turn.
  pk.pack_map(3);
  pk.pack("unknown");
  pk.pack(std::vector<std::string>{std::string(70000, 'z')});
  pk.pack("index");
  pk.pack(uint64_t{1} << 40);
  pk.pack("turns");
  pk.pack("not turns");
  pk.pack(conversation(3));
  const std::string bytes = encode_raw(MsgType::kAssign, body, kProtocolVersion);

  CHECK(peek_type(bytes.data(), bytes.size()) == MsgType::kAssign);
  auto s = salvage_assign(bytes.data(), bytes.size());
  REQUIRE(s.has_value());
  REQUIRE(s->conversations.size() == 1);
  CHECK(s->conversations[0].index == 3);
  REQUIRE(s->failed.size() == 1);
  CHECK(s->failed[0].conversation_index == uint64_t{1} << 40);
  CHECK_FALSE(s->undecodable.has_value());
}

TEST_CASE("salvage ignores what is not an Assign and survives every truncation") {
  const std::string hello = encode(Hello{kProtocolVersion, "w", "h", 1});
  CHECK(peek_type(hello.data(), hello.size()) == MsgType::kHello);
  CHECK_FALSE(salvage_assign(hello.data(), hello.size()).has_value());
  CHECK_FALSE(peek_type("\xc1", 1).has_value());
  CHECK_FALSE(salvage_assign("", 0).has_value());

  const std::string bytes =
      assign_of(8, {packed(conversation(1)), packed(conversation(2)), packed(conversation(3))});
  size_t salvaged = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto s = salvage_assign(bytes.data(), n);  // never reads past n (ASan checks it)
    if (!s) continue;
    ++salvaged;
    // Whatever was kept is whole; the rest is accounted for.
    for (const auto& c : s->conversations) CHECK(c.turns.size() == 1);
    INFO("truncated to " << n << " of " << bytes.size() << " bytes");
    CHECK((s->undecodable.has_value() || !s->failed.empty()));
  }
  CHECK(salvaged > 0);
}
