// "error_summary", AIPerf's ErrorDetailsCount list [{error_details: {code, type, message},
// count}], as both summary.json and AIPerf's export (output.aiperf_export) write it; summary.json
// adds each group's first raw message and example correlation ids.
#pragma once

#include <rapidjson/rapidjson.h>

#include <string>
#include <vector>

#include "controller/report/metrics.hpp"

namespace convoy::controller {

// `w`: a rapidjson writer inside an object.
template <class Writer>
void write_error_summary_json(Writer& w, const std::vector<ErrorGroup>& errors,
                              bool with_examples) {
  auto put = [&w](const char* key, const std::string& v) {
    w.Key(key);
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.Key("error_summary");
  w.StartArray();
  for (const ErrorGroup& e : errors) {
    w.StartObject();
    w.Key("error_details");
    w.StartObject();
    w.Key("code");
    w.Int64(e.code);
    put("type", e.type);
    put("message", e.message);
    w.EndObject();
    w.Key("count");
    w.Int64(e.count);
    if (with_examples) {
      put("example", e.example);  // one raw message of the group; `message` is the normalised text
      w.Key("example_correlation_ids");
      w.StartArray();
      for (const auto& id : e.example_correlation_ids) {
        w.String(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace convoy::controller
