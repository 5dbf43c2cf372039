// A value's msgpack bytes, for the proto tests that build messages by hand.
#pragma once

#include <msgpack.hpp>

#include <string>

namespace convoy::test {

template <class T>
std::string packed(const T& value) {
  msgpack::sbuffer b;
  msgpack::pack(b, value);
  return std::string(b.data(), b.size());
}

}  // namespace convoy::test
