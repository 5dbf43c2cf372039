// The one-pass Record decoder (proto/map_codecs.cpp) must read every field that
// MSGPACK_DEFINE_MAP writes: a field added to Record but not to the decoder silently arrives
// at the controller as its default (reasoning_tokens once did). This test finds such a field
// without naming any: each scalar key of a packed Record gets a non-default value in turn, and
// the fast and the generic decoders must then agree.
#include <doctest/doctest.h>

#include <msgpack.hpp>
#include <string>

#include "proto/messages.hpp"

using convoy::proto::Conversation;
using convoy::proto::ConversationEnd;
using convoy::proto::Record;
using convoy::proto::RecordError;
using convoy::proto::SubAgent;
using convoy::proto::Turn;
using convoy::proto::WindowStart;

namespace {

template <typename T>
std::string repacked(const T& v) {
  msgpack::sbuffer b;
  msgpack::pack(b, v);
  return {b.data(), b.size()};
}

// For each scalar member of a packed default T, changes that one value to a non-default of the
// same type and checks that T's fast decoder (proto/map_codecs.cpp) and the generic
// MSGPACK_DEFINE_MAP one read the same T. Returns how many members were checked.
template <typename T>
int check_every_scalar_member() {
  msgpack::sbuffer defaults;
  msgpack::pack(defaults, T{});
  const msgpack::object_handle oh = msgpack::unpack(defaults.data(), defaults.size());
  const msgpack::object& map = oh.get();
  REQUIRE(map.type == msgpack::type::MAP);
  int checked = 0;
  for (uint32_t i = 0; i < map.via.map.size; ++i) {
    const msgpack::object_kv& kv = map.via.map.ptr[i];
    const std::string key(kv.key.via.str.ptr, kv.key.via.str.size);
    // Rebuild the map with this one value changed to a non-default of the same type.
    msgpack::sbuffer changed;
    msgpack::packer<msgpack::sbuffer> pk(changed);
    pk.pack_map(map.via.map.size);
    bool scalar = true;
    for (uint32_t j = 0; j < map.via.map.size; ++j) {
      const msgpack::object_kv& other = map.via.map.ptr[j];
      pk.pack(other.key);
      if (j != i) {
        pk.pack(other.val);
        continue;
      }
      switch (other.val.type) {
        case msgpack::type::POSITIVE_INTEGER:
        case msgpack::type::NEGATIVE_INTEGER:
          pk.pack(other.val.as<int64_t>() == 1 ? int64_t{2} : int64_t{1});
          break;
        case msgpack::type::BOOLEAN:
          pk.pack(!other.val.as<bool>());
          break;
        case msgpack::type::STR:
          pk.pack(std::string("x"));
          break;
        case msgpack::type::FLOAT64:
        case msgpack::type::FLOAT32:
          pk.pack(other.val.as<double>() == 1.5 ? 2.5 : 1.5);
          break;
        default:  // arrays and maps (error, session_control, chunk_gaps_ns): left as they are
          pk.pack(other.val);
          scalar = false;
      }
    }
    if (!scalar) continue;
    INFO("member ", key);
    const msgpack::object_handle ch = msgpack::unpack(changed.data(), changed.size());
    T generic;
    bool enum_field = false;
    try {
      generic.msgpack_unpack(ch.get());
    } catch (const std::exception&) {
      enum_field = true;  // an enum packed as a string that "x" does not name
    }
    if (enum_field) continue;
    const T fast = ch.get().as<T>();
    CHECK(repacked(fast) == repacked(generic));
    CHECK(repacked(fast) != repacked(T{}));
    ++checked;
  }
  return checked;
}

}  // namespace

TEST_CASE("the fast Record decoder reads every scalar field the generic decoder reads") {
  CHECK(check_every_scalar_member<Record>() >= 20);
}

TEST_CASE("the other fast decoders read every scalar member the generic decoder reads") {
  CHECK(check_every_scalar_member<RecordError>() == 4);
  CHECK(check_every_scalar_member<ConversationEnd>() == 5);
  CHECK(check_every_scalar_member<WindowStart>() == 2);
  CHECK(check_every_scalar_member<Turn>() == 7);
  CHECK(check_every_scalar_member<SubAgent>() == 5);
  CHECK(check_every_scalar_member<Conversation>() == 11);
}

TEST_CASE("the fast decoders read members in any order and skip unknown keys") {
  Record r;
  r.x_request_id = "req";
  r.end_ns = 42;
  r.error.kind = convoy::proto::ErrorKind::kHttpStatus;
  r.error.message = "boom";
  // The members of the packed record, reversed, with a key no decoder knows in the middle.
  msgpack::sbuffer packed;
  msgpack::pack(packed, r);
  const msgpack::object_handle oh = msgpack::unpack(packed.data(), packed.size());
  const msgpack::object& map = oh.get();
  msgpack::sbuffer shuffled;
  msgpack::packer<msgpack::sbuffer> pk(shuffled);
  pk.pack_map(map.via.map.size + 1);
  for (uint32_t i = map.via.map.size; i-- > 0;) {
    if (i == map.via.map.size / 2) {
      pk.pack(std::string("a_newer_peers_key"));
      pk.pack(std::string("ignored"));
    }
    pk.pack(map.via.map.ptr[i].key);
    pk.pack(map.via.map.ptr[i].val);
  }
  const msgpack::object_handle sh = msgpack::unpack(shuffled.data(), shuffled.size());
  CHECK(repacked(sh.get().as<Record>()) == repacked(r));
}
