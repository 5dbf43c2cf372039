// Helpers shared by the dataset tests.
#pragma once

#include <msgpack.hpp>

#include <string>

#include "controller/config/config.hpp"
#include "proto/messages.hpp"

namespace convoy::controller::testing {

// The msgpack bytes of a conversation: what an Assign carries, so equal bytes = equal requests.
inline std::string packed(const proto::Conversation& conversation) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, conversation);
  return std::string(buffer.data(), buffer.size());
}

inline Config config_with_seed(uint64_t seed) {
  Config config;
  config.seed = seed;
  return config;
}

}  // namespace convoy::controller::testing
