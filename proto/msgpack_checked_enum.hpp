// A msgpack adaptor for an enum that is range-checked on decode (proto/messages.hpp's settings
// enums use it).
#pragma once

#include <msgpack.hpp>
#include <type_traits>

// The settings enums are range-checked on decode: a value past the last enumerator (a newer
// peer's, or garbage) throws msgpack::type_error, so decode fails cleanly (Decoded::as returns
// nullopt) instead of yielding an enum value no switch handles. MSGPACK_ADD_ENUM does not check:
// it static_casts whatever integer arrives. Packing is MSGPACK_ADD_ENUM's (the underlying
// integer).
// E is a type name, which cannot be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define CONVOY_MSGPACK_CHECKED_ENUM(E, last)                                                 \
  namespace msgpack {                                                                        \
  MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {                                    \
    namespace adaptor {                                                                      \
    template <>                                                                              \
    struct convert<E> {                                                                      \
      msgpack::object const& operator()(msgpack::object const& o, E& v) const {              \
        std::underlying_type_t<E> raw{};                                                     \
        msgpack::operator>>(o, raw); /* throws type_error unless an integer that fits */     \
        if (raw > static_cast<std::underlying_type_t<E>>(last)) throw msgpack::type_error(); \
        v = static_cast<E>(raw);                                                             \
        return o;                                                                            \
      }                                                                                      \
    };                                                                                       \
    template <>                                                                              \
    struct object<E> {                                                                       \
      void operator()(msgpack::object& o, const E& v) const {                                \
        msgpack::operator<<(o, static_cast<std::underlying_type_t<E>>(v));                   \
      }                                                                                      \
    };                                                                                       \
    template <>                                                                              \
    struct object_with_zone<E> {                                                             \
      void operator()(msgpack::object::with_zone& o, const E& v) const {                     \
        msgpack::operator<<(o, static_cast<std::underlying_type_t<E>>(v));                   \
      }                                                                                      \
    };                                                                                       \
    template <>                                                                              \
    struct pack<E> {                                                                         \
      template <typename Stream>                                                             \
      msgpack::packer<Stream>& operator()(msgpack::packer<Stream>& o, const E& v) const {    \
        return msgpack::operator<<(o, static_cast<std::underlying_type_t<E>>(v));            \
      }                                                                                      \
    };                                                                                       \
    }                                                                                        \
  }                                                                                          \
  }
// NOLINTEND(bugprone-macro-parentheses)
