// Shared by the e2e tests that start their own convoy-mock: its URL once it listens, and a
// header of one line of its request log (--log-requests).
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "e2e/subprocess.hpp"

namespace convoy::test {

// Waits for convoy-mock's "listening on http://..." line; returns the URL.
inline std::string mock_url(Subprocess& mock) {
  REQUIRE(mock.wait_for_output("listening on ", 30));
  auto pos = mock.output().find("http://");
  REQUIRE(pos != std::string::npos);
  return mock.output().substr(pos, mock.output().find('\n', pos) - pos);
}

// A header's value in a request-log line, by case-insensitive name ("" when absent).
inline std::string logged_header(const rapidjson::Value& line, std::string wanted) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  wanted = lower(wanted);
  if (!line.HasMember("headers") || !line["headers"].IsObject()) return "";
  for (const auto& h : line["headers"].GetObject()) {
    if (lower(h.name.GetString()) == wanted && h.value.IsString()) return h.value.GetString();
  }
  return "";
}

}  // namespace convoy::test
