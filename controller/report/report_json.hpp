// Lenient reads of the JSON sections report.html is handed (SummaryExtras: run, verdict,
// insights, workers): a missing key or a value of another type reads as empty, never throws.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "controller/report/svg_chart.hpp"

namespace convoy::controller::report_json {

inline rapidjson::Document parse(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) doc.SetNull();
  return doc;
}

// A string, a number or a bool as text; "" when absent.
inline std::string str(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return {};
  const rapidjson::Value& v = it->value;
  if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsNumber()) return chart::number(v.GetDouble());
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  return {};
}

inline double num(const rapidjson::Value& obj, const char* key, double fallback) {
  if (!obj.IsObject()) return fallback;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsNumber()) return fallback;
  return it->value.GetDouble();
}

inline std::vector<std::string> strings(const rapidjson::Value& obj, const char* key) {
  std::vector<std::string> out;
  if (!obj.IsObject()) return out;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsArray()) return out;
  for (const auto& v : it->value.GetArray()) {
    if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

// "pass" | "warn" | "fail" as a CSS class; "unknown" for anything else.
inline std::string verdict_class(const std::string& status) {
  if (status == "pass" || status == "warn" || status == "fail") return status;
  return "unknown";
}

}  // namespace convoy::controller::report_json
