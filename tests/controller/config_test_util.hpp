// Shared by the config tests: the ConfigError a text raises, and CHECK_ERROR on its parts.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/config/config.hpp"

namespace convoy::test {

// The ConfigError message for `text` (parsed as file "c.yaml"); fails the test when none.
inline std::string error_of(const std::string& text,
                            const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(text, "c.yaml", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError for:\n" << text);
  return {};
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace convoy::test

// Every part must appear in the ConfigError that `text` raises.
#define CHECK_ERROR(text, ...)                                                            \
  do {                                                                                    \
    const std::string message_ = convoy::test::error_of(text);                            \
    for (const char* part_ : {__VA_ARGS__}) {                                             \
      CHECK_MESSAGE(convoy::test::contains(message_, part_), message_, " lacks ", part_); \
    }                                                                                     \
  } while (false)
