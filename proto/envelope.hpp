// One envelope for every message: {v: protocol version, t: type, b: body}. Encode/decode with
// size and shape limits; garbage is an error value, never an exception across the caller.
#pragma once

#include <optional>
#include <string>

#include "proto/messages.hpp"

namespace convoy::proto {

template <class T>
struct TypeOf;
#define CONVOY_PROTO_TYPE(T, K)                  \
  template <>                                    \
  struct TypeOf<T> {                             \
    static constexpr MsgType value = MsgType::K; \
  }
CONVOY_PROTO_TYPE(Hello, kHello);
CONVOY_PROTO_TYPE(Welcome, kWelcome);
CONVOY_PROTO_TYPE(Reject, kReject);
CONVOY_PROTO_TYPE(Ping, kPing);
CONVOY_PROTO_TYPE(Pong, kPong);
CONVOY_PROTO_TYPE(Heartbeat, kHeartbeat);
CONVOY_PROTO_TYPE(Assign, kAssign);
CONVOY_PROTO_TYPE(Stop, kStop);
CONVOY_PROTO_TYPE(Results, kResults);
CONVOY_PROTO_TYPE(Bye, kBye);
#undef CONVOY_PROTO_TYPE

// Limits on what a peer may make us allocate, beyond the total byte size.
msgpack::unpack_limit decode_limits();

std::string encode_raw(MsgType type, const msgpack::sbuffer& body, uint32_t version);

template <class T>
std::string encode(const T& msg, uint32_t version = kProtocolVersion) {
  msgpack::sbuffer body;
  msgpack::pack(body, msg);
  return encode_raw(TypeOf<T>::value, body, version);
}

// A decoded envelope; the body stays a msgpack object owned by `handle`.
struct Decoded {
  uint32_t version = 0;
  MsgType type{};
  msgpack::object_handle handle;
  msgpack::object body;

  // Converts the body; nullopt when it has the wrong shape.
  template <class T>
  std::optional<T> as() const {
    try {
      T out;
      body.convert(out);
      return out;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
};

// nullopt (with `error` set) for oversized, truncated, non-envelope or unknown-type input.
std::optional<Decoded> decode(const void* data, size_t size, std::string* error,
                              size_t max_bytes = kMaxMessageBytes);

// decode(), with the body's strings pointing into `data` instead of copied out of it: cheaper
// for the messages on the hot paths (a result batch's every key and id), and `data` must
// outlive the Decoded and everything read from its body without a copy (as<T>() copies).
std::optional<Decoded> decode_in_place(const void* data, size_t size, std::string* error);

std::string_view to_string(MsgType type);

// The type of an envelope, read without decoding its body (so without the body's limits);
// nullopt when even the envelope's structure is unreadable.
std::optional<MsgType> peek_type(const void* data, size_t size);

// What a worker can still use of an Assign that decode() or as<Assign>() refused (a string
// over the str limit, a field of the wrong type, ...): every conversation is decoded on its
// own, so one bad conversation never takes the others of its batch down.
struct AssignSalvage {
  uint64_t batch = 0;                       // 0 when the batch number itself was unreadable
  std::vector<Conversation> conversations;  // the ones that decoded
  // Assign::window: whether the conversations wait in the worker's window (concurrency refill)
  // or start now. nullopt when it cannot be read (not a bool, or the bytes end before it): the
  // worker then cannot place them and reports them failed.
  std::optional<bool> window;
  std::vector<WindowStart> start;  // Assign::start, each that decoded
  // Starts that did not decode, by their conversation's index: the controller gave each a slot.
  std::vector<uint64_t> unreadable_starts;
  std::vector<FailedConversation> failed;  // undecodable, with their index
  // Undecodable down to the index: positions in the batch, or the whole batch.
  std::optional<UndecodableAssign> undecodable;
};

// nullopt when the message is not an Assign (or its type cannot be read).
std::optional<AssignSalvage> salvage_assign(const void* data, size_t size);

}  // namespace convoy::proto
