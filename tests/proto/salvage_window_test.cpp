// Salvaging a window batch (concurrency refill): an Assign that does not decode whole
// still says whether its conversations wait in the worker's window or start now, and which
// window conversations it starts. A worker that guessed would start window conversations outside
// the concurrency slots.
#include <doctest/doctest.h>

#include <string>

#include "proto/envelope.hpp"

using namespace convoy::proto;

namespace {

Conversation window_conversation(uint64_t index, std::string text = "hi") {
  Conversation c;
  c.index = index;
  c.correlation_id = "corr-" + std::to_string(index);
  Turn t;
  t.user_text = std::move(text);
  c.turns.push_back(t);
  return c;
}

// A window Assign of conversations 1 and 2, 2 over the decoder's 16 MiB string limit, which
// also starts conversation 7.
Assign heavy_window_batch() {
  Assign a;
  a.batch = 3;
  a.window = true;
  a.conversations = {window_conversation(1), window_conversation(2, std::string(17u << 20, 'x'))};
  a.start = {{7, 12345}};
  return a;
}

// An Assign body {batch: 4, conversations: [conversation 1], window: <value>, start: <starts>}
// packed by hand, so that the window flag and the starts can be of any shape.
template <class Window, class Starts>
std::string assign_with(const Window& window, const Starts& starts) {
  msgpack::sbuffer body;
  msgpack::packer<msgpack::sbuffer> pk(body);
  pk.pack_map(4);
  pk.pack("batch");
  pk.pack(4);
  pk.pack("conversations");
  pk.pack(std::vector<Conversation>{window_conversation(1)});
  pk.pack("window");
  pk.pack(window);
  pk.pack("start");
  pk.pack(starts);
  return encode_raw(MsgType::kAssign, body, kProtocolVersion);
}

}  // namespace

TEST_CASE("salvage reads the window flag and the starts of a batch that does not decode whole") {
  SUBCASE("a window batch") {
    const std::string bytes = encode(heavy_window_batch());
    REQUIRE_FALSE(decode(bytes.data(), bytes.size(), nullptr).has_value());
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK(s->window == std::optional<bool>(true));
    REQUIRE(s->conversations.size() == 1);
    CHECK(s->conversations[0].index == 1);
    REQUIRE(s->failed.size() == 1);
    CHECK(s->failed[0].conversation_index == 2);
    REQUIRE(s->start.size() == 1);
    CHECK(s->start[0].conversation_index == 7);
    CHECK(s->start[0].start_ns == 12345);
    CHECK(s->unreadable_starts.empty());
    CHECK_FALSE(s->undecodable.has_value());
  }
  SUBCASE("a batch that starts now") {
    Assign a = heavy_window_batch();
    a.window = false;
    a.start.clear();
    const std::string bytes = encode(a);
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK(s->window == std::optional<bool>(false));
    CHECK(s->conversations.size() == 1);
    CHECK(s->start.empty());
  }
  SUBCASE("a body without the flag is not a window batch, as decode reads it") {
    msgpack::sbuffer body;
    msgpack::packer<msgpack::sbuffer> pk(body);
    pk.pack_map(2);
    pk.pack("batch");
    pk.pack("not a number");  // makes as<Assign>() fail
    pk.pack("conversations");
    pk.pack(std::vector<Conversation>{window_conversation(1)});
    const std::string bytes = encode_raw(MsgType::kAssign, body, kProtocolVersion);
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK(s->window == std::optional<bool>(false));
    CHECK(s->conversations.size() == 1);
  }
}

TEST_CASE("salvage leaves the window flag unknown when it cannot be read") {
  SUBCASE("a flag that is not a bool") {
    const std::string bytes = assign_with(7, std::vector<WindowStart>{});
    auto d = decode(bytes.data(), bytes.size(), nullptr);
    REQUIRE(d.has_value());
    CHECK_FALSE(d->as<Assign>().has_value());
    auto s = salvage_assign(bytes.data(), bytes.size());
    REQUIRE(s.has_value());
    CHECK_FALSE(s->window.has_value());
    CHECK(s->conversations.size() == 1);  // decoded; the worker cannot place it
  }
  SUBCASE("bytes that end after the conversations") {
    Assign a = heavy_window_batch();
    a.conversations.pop_back();
    const std::string whole = encode(a);
    const std::string window_key = std::string("\xa6") + "window";
    const size_t at = whole.rfind(window_key);
    REQUIRE(at != std::string::npos);
    auto s = salvage_assign(whole.data(), at);
    REQUIRE(s.has_value());
    CHECK_FALSE(s->window.has_value());
    CHECK(s->conversations.size() == 1);
    REQUIRE(s->undecodable.has_value());  // the cut is reported, naming no conversation
    CHECK(s->undecodable->batch == 3);
    CHECK(s->undecodable->unreadable_from == 1);
  }
}

TEST_CASE("salvage names a window start that does not decode by its conversation") {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> pk(b);
  pk.pack_array(3);
  pk.pack(WindowStart{5, 100});
  pk.pack_map(2);
  pk.pack("conversation_index");
  pk.pack(9);
  pk.pack("start_ns");
  pk.pack("soon");  // not a number
  pk.pack(42);      // not a start at all: no conversation to name
  msgpack::object_handle h = msgpack::unpack(b.data(), b.size());
  const std::string bytes = assign_with(true, h.get());
  auto s = salvage_assign(bytes.data(), bytes.size());
  REQUIRE(s.has_value());
  CHECK(s->window == std::optional<bool>(true));
  REQUIRE(s->start.size() == 1);
  CHECK(s->start[0].conversation_index == 5);
  CHECK(s->unreadable_starts == std::vector<uint64_t>{9});
  CHECK(s->conversations.size() == 1);
}
