#include "proto/envelope.hpp"

#include <cstring>

namespace convoy::proto {

msgpack::unpack_limit decode_limits() {
  return msgpack::unpack_limit(/*array=*/4u << 20, /*map=*/1u << 16, /*str=*/kMaxStringBytes,
                               /*bin=*/kMaxStringBytes, /*ext=*/1u << 10, /*depth=*/16);
}

std::string encode_raw(MsgType type, const msgpack::sbuffer& body, uint32_t version) {
  msgpack::sbuffer out(body.size() + 16);
  msgpack::packer<msgpack::sbuffer> pk(out);
  pk.pack_map(3);
  pk.pack("v");
  pk.pack(version);
  pk.pack("t");
  pk.pack(static_cast<uint8_t>(type));
  pk.pack("b");
  out.write(body.data(), body.size());  // the body is already msgpack: splice it in
  return std::string(out.data(), out.size());
}

namespace {

bool known_type(uint64_t t) {
  return t >= static_cast<uint64_t>(MsgType::kHello) && t <= static_cast<uint64_t>(MsgType::kBye);
}

// msgpack's unpack_reference_func: strings, binaries and extensions point into the buffer.
bool reference_all(msgpack::type::object_type /*type*/, size_t /*size*/, void* /*user*/) {
  return true;
}

std::optional<Decoded> decode_envelope(const void* data, size_t size, std::string* error,
                                       size_t max_bytes, msgpack::unpack_reference_func reference) {
  auto fail = [&](std::string msg) -> std::optional<Decoded> {
    if (error) *error = std::move(msg);
    return std::nullopt;
  };
  if (size > max_bytes) {
    return fail("message of " + std::to_string(size) + " bytes exceeds the limit of " +
                std::to_string(max_bytes));
  }
  Decoded d;
  try {
    size_t off = 0;
    d.handle = msgpack::unpack(static_cast<const char*>(data), size, off, reference, nullptr,
                               decode_limits());
    if (off != size) return fail("trailing bytes after the envelope");
  } catch (const std::exception& e) {
    return fail(std::string("undecodable message: ") + e.what());
  }
  const msgpack::object& root = d.handle.get();
  if (root.type != msgpack::type::MAP) return fail("envelope is not a map");
  bool have_v = false, have_t = false, have_b = false;
  for (uint32_t i = 0; i < root.via.map.size; ++i) {
    const auto& kv = root.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR || kv.key.via.str.size != 1) continue;
    char k = kv.key.via.str.ptr[0];
    if (k == 'v' && kv.val.type == msgpack::type::POSITIVE_INTEGER) {
      if (kv.val.via.u64 > UINT32_MAX) return fail("bad protocol version");
      d.version = static_cast<uint32_t>(kv.val.via.u64);
      have_v = true;
    } else if (k == 't' && kv.val.type == msgpack::type::POSITIVE_INTEGER) {
      if (!known_type(kv.val.via.u64)) {
        return fail("unknown message type " + std::to_string(kv.val.via.u64));
      }
      d.type = static_cast<MsgType>(kv.val.via.u64);
      have_t = true;
    } else if (k == 'b') {
      d.body = kv.val;
      have_b = true;
    }
  }
  if (!have_v || !have_t || !have_b) return fail("envelope lacks version, type or body");
  return d;
}

}  // namespace

std::optional<Decoded> decode(const void* data, size_t size, std::string* error, size_t max_bytes) {
  return decode_envelope(data, size, error, max_bytes, nullptr);
}

std::optional<Decoded> decode_in_place(const void* data, size_t size, std::string* error) {
  return decode_envelope(data, size, error, kMaxMessageBytes, &reference_all);
}

std::string_view to_string(MsgType type) {
  switch (type) {
    case MsgType::kHello:
      return "hello";
    case MsgType::kWelcome:
      return "welcome";
    case MsgType::kReject:
      return "reject";
    case MsgType::kPing:
      return "ping";
    case MsgType::kPong:
      return "pong";
    case MsgType::kHeartbeat:
      return "heartbeat";
    case MsgType::kAssign:
      return "assign";
    case MsgType::kStop:
      return "stop";
    case MsgType::kResults:
      return "results";
    case MsgType::kBye:
      return "bye";
  }
  return "unknown";
}

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return "none";
    case ErrorKind::kDns:
      return "dns";
    case ErrorKind::kConnect:
      return "connect";
    case ErrorKind::kTls:
      return "tls";
    case ErrorKind::kSend:
      return "send";
    case ErrorKind::kHttpStatus:
      return "http_status";
    case ErrorKind::kTimeoutBeforeFirstByte:
      return "timeout_before_first_byte";
    case ErrorKind::kTimeoutMidStream:
      return "timeout_mid_stream";
    case ErrorKind::kStreamDisconnected:
      return "stream_disconnected";
    case ErrorKind::kMalformedEvent:
      return "malformed_event";
    case ErrorKind::kServerErrorEvent:
      return "server_error_event";
    case ErrorKind::kCancelled:
      return "cancelled";
    case ErrorKind::kOther:
      return "other";
    case ErrorKind::kResponseTooLarge:
      return "response_too_large";
  }
  return "unknown";
}

}  // namespace convoy::proto
