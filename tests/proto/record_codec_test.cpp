// The one-pass Record decoder (proto/map_codecs.cpp) must read every field that
// MSGPACK_DEFINE_MAP writes: a field added to Record but not to the decoder silently arrives
// at the controller as its default (reasoning_tokens once did). This test finds such a field
// without naming any: each scalar key of a packed Record gets a non-default value in turn, and
// the fast and the generic decoders must then agree.
#include <doctest/doctest.h>

#include <msgpack.hpp>
#include <string>

#include "proto/messages.hpp"

using convoy::proto::Record;

namespace {

std::string repacked(const Record& r) {
  msgpack::sbuffer b;
  msgpack::pack(b, r);
  return {b.data(), b.size()};
}

}  // namespace

TEST_CASE("the fast Record decoder reads every scalar field the generic decoder reads") {
  msgpack::sbuffer defaults;
  msgpack::pack(defaults, Record{});
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
        default:  // arrays and maps (error, session_control, chunk_gaps_ns): left as they are
          pk.pack(other.val);
          scalar = false;
      }
    }
    if (!scalar) continue;
    INFO("field ", key);
    const msgpack::object_handle ch = msgpack::unpack(changed.data(), changed.size());
    Record generic;
    bool enum_field = false;
    try {
      generic.msgpack_unpack(ch.get());
    } catch (const std::exception&) {
      enum_field = true;  // an enum packed as a string that "x" does not name
    }
    if (enum_field) continue;
    const Record fast = ch.get().as<Record>();
    CHECK(repacked(fast) == repacked(generic));
    CHECK(repacked(fast) != repacked(Record{}));
    ++checked;
  }
  CHECK(checked >= 20);
}
