// libFuzzer target for the wire decoder: the controller decodes whatever reaches its sockets
// (anyone can connect without CURVE), and a worker salvages Assigns that do not decode whole.
// Beyond "does not crash": what decodes re-encodes to the same message, the envelope's type
// reads the same without decoding the body, decoding in place reads what decoding with copies
// reads, and salvage agrees with the whole-message decode on every Assign the latter accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proto/envelope.hpp"

namespace {

using namespace convoy::proto;

// Converts the body to T; when that works, T encodes and decodes back to an equal encoding.
template <class T>
void round_trip(const Decoded& d) {
  auto msg = d.as<T>();
  if (!msg) return;
  const std::string once = encode(*msg, d.version);
  std::string error;
  auto again = decode(once.data(), once.size(), &error);
  if (!again || again->type != d.type) std::abort();
  auto back = again->as<T>();
  if (!back || encode(*back, d.version) != once) std::abort();
}

void check_salvage(const uint8_t* data, size_t size, const std::optional<Decoded>& d) {
  auto s = salvage_assign(data, size);
  if (d && (d->type == MsgType::kAssign) != s.has_value()) std::abort();
  if (!d || d->type != MsgType::kAssign) return;
  auto whole = d->as<Assign>();
  if (!whole) return;
  // Everything decoded whole must decode piece by piece too, to the same conversations, window
  // flag and starts.
  if (!s->failed.empty() || s->undecodable || !s->unreadable_starts.empty()) std::abort();
  if (s->conversations.size() != whole->conversations.size()) std::abort();
  if (s->window != whole->window) std::abort();
  if (encode(Assign{0, {}, false, s->start}) != encode(Assign{0, {}, false, whole->start})) {
    std::abort();
  }
  for (size_t i = 0; i < s->conversations.size(); ++i) {
    Assign one{0, {s->conversations[i]}, false, {}};
    Assign other{0, {whole->conversations[i]}, false, {}};
    if (encode(one) != encode(other)) std::abort();
  }
  // The same Assign, encoded afresh and cut short where the first byte says: what is salvaged
  // is a prefix of the conversations (never something made up from misread bytes), and the
  // cut is always reported.
  if (size < 1) return;
  const std::string canonical = encode(*whole, d->version);
  const size_t cut = static_cast<size_t>(data[0]) * canonical.size() / 256;
  auto part = salvage_assign(canonical.data(), cut);
  if (!part) return;
  if (part->conversations.size() > whole->conversations.size()) std::abort();
  for (size_t i = 0; i < part->conversations.size(); ++i) {
    Assign one{0, {part->conversations[i]}, false, {}};
    Assign other{0, {whole->conversations[i]}, false, {}};
    if (encode(one) != encode(other)) std::abort();
  }
  if (!part->undecodable && part->failed.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto d = decode(data, size, &error);
  // The hot paths decode in place (strings point into the message): the same verdict, the same
  // body.
  std::string in_place_error;
  const auto in_place = decode_in_place(data, size, &in_place_error);
  if (d.has_value() != in_place.has_value()) std::abort();
  if (d) {
    msgpack::sbuffer copied;
    msgpack::sbuffer referenced;
    msgpack::pack(copied, d->body);
    msgpack::pack(referenced, in_place->body);
    if (std::string_view(copied.data(), copied.size()) !=
        std::string_view(referenced.data(), referenced.size())) {
      std::abort();
    }
  }
  const auto peeked = peek_type(data, size);
  if (d && peeked != d->type) std::abort();
  if (d) {
    switch (d->type) {
      case MsgType::kHello:
        round_trip<Hello>(*d);
        break;
      case MsgType::kWelcome:
        round_trip<Welcome>(*d);
        break;
      case MsgType::kReject:
        round_trip<Reject>(*d);
        break;
      case MsgType::kPing:
        round_trip<Ping>(*d);
        break;
      case MsgType::kPong:
        round_trip<Pong>(*d);
        break;
      case MsgType::kHeartbeat:
        round_trip<Heartbeat>(*d);
        break;
      case MsgType::kAssign:
        round_trip<Assign>(*d);
        break;
      case MsgType::kStop:
        round_trip<Stop>(*d);
        break;
      case MsgType::kResults:
        round_trip<Results>(*d);
        break;
      case MsgType::kBye:
        round_trip<Bye>(*d);
        break;
    }
  }
  check_salvage(data, size, d);
  return 0;
}
