// libFuzzer target for the Prometheus text / OpenMetrics parser and the series store behind it.
// Beyond "does not crash": every sample the parser accepts, written back out in the text
// format, parses to the same sample; no line is both a sample and malformed; and the store's
// summary of whatever was accepted is valid JSON.
#include <rapidjson/document.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "controller/report/server_metrics_json.hpp"
#include "controller/telemetry/prom_parser.hpp"
#include "controller/telemetry/series_store.hpp"

namespace {

using convoy::telemetry::Label;
using convoy::telemetry::PromParser;
using convoy::telemetry::Sample;

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render(const Sample& s) {
  std::string line = s.name + "{";
  for (const Label& l : s.labels) line += l.name + "=\"" + escape(l.value) + "\",";
  line += "} ";
  char number[64];
  if (std::isnan(s.value)) {
    line += "NaN";
  } else if (std::isinf(s.value)) {
    line += s.value > 0 ? "+Inf" : "-Inf";
  } else {
    std::snprintf(number, sizeof number, "%.17g", s.value);
    line += number;
  }
  return line + "\n";
}

bool same(const Sample& a, const Sample& b) {
  const bool values = (std::isnan(a.value) && std::isnan(b.value)) || a.value == b.value;
  return a.name == b.name && a.labels == b.labels && values;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Sample> samples;
  PromParser parser;
  const auto result = parser.parse(text, [&](const Sample& s) { samples.push_back(s); });
  if (result.samples != static_cast<int64_t>(samples.size())) std::abort();
  int64_t lines = 1;
  for (char c : text) lines += c == '\n';
  if (result.samples + result.malformed > lines) std::abort();
  if ((result.malformed > 0) == result.first_error.empty()) std::abort();

  for (const Sample& s : samples) {
    std::vector<Sample> again;
    PromParser p;
    const auto r = p.parse(render(s), [&](const Sample& x) { again.push_back(x); });
    if (r.malformed != 0 || again.size() != 1 || !same(s, again[0])) std::abort();
  }

  convoy::telemetry::SeriesStore store({{"fuzz", "http://127.0.0.1/metrics"}}, 64);
  store.add_scrape(0, 0, samples, result.malformed, result.first_error);
  store.start_window(1);
  store.add_scrape(0, 1'000'000'000, samples, result.malformed, result.first_error);
  const std::string json = convoy::controller::server_metrics_json(store.server_metrics(1.0));
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) std::abort();
  return 0;
}
