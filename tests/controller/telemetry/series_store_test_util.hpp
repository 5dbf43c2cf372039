// Shared by the series store's tests (telemetry_store_test, telemetry_stages_test): scrapes fed
// by hand as exposition text, and the summary JSON read back.
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <vector>

#include "controller/report/server_metrics_json.hpp"
#include "controller/telemetry/prom_parser.hpp"
#include "controller/telemetry/series_store.hpp"

namespace convoy::test {

inline constexpr int64_t kSecond = 1'000'000'000;

// The samples of one exposition text.
inline std::vector<telemetry::Sample> scrape_of(const std::string& text) {
  std::vector<telemetry::Sample> out;
  telemetry::PromParser parser;
  parser.parse(text, [&](const telemetry::Sample& s) { out.push_back(s); });
  return out;
}

// One scrape of endpoint 0 at `t_ns`, without error.
inline void feed(telemetry::SeriesStore& store, int64_t t_ns, const std::string& text) {
  store.add_scrape(0, t_ns, scrape_of(text), 0, "");
}

// The store's summary.json "server_metrics" (1 s interval), as the report writes it, parsed.
inline rapidjson::Document summary(const telemetry::SeriesStore& store) {
  rapidjson::Document d;
  d.Parse(controller::server_metrics_json(store.server_metrics(1.0)).c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

// The metrics[] entry named `name` (the first one); fails the test when none.
inline const rapidjson::Value& metric(const rapidjson::Document& d, const std::string& name) {
  for (const auto& m : d["metrics"].GetArray()) {
    if (name == m["name"].GetString()) return m;
  }
  FAIL("no metric " << name);
  return d;
}

}  // namespace convoy::test
