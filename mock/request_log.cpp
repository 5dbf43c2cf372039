#include "mock/request_log.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <stdexcept>

namespace convoy::mock {

RequestLog::RequestLog(const std::string& path) : file_(std::fopen(path.c_str(), "a")) {
  if (!file_) throw std::runtime_error("cannot open --log-requests file " + path);
}

void RequestLog::write(std::string_view method, std::string_view target,
                       const std::vector<std::pair<std::string_view, std::string_view>>& headers,
                       std::string_view body, const rapidjson::Value* body_json,
                       std::string_view routing) {
  auto s = [](std::string_view v) { return static_cast<rapidjson::SizeType>(v.size()); };
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("ts_ms");
  w.Int64(std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count());
  w.Key("method");
  w.String(method.data(), s(method));
  w.Key("target");
  w.String(target.data(), s(target));
  w.Key("headers");
  w.StartObject();
  for (const auto& [name, value] : headers) {
    w.Key(name.data(), s(name));
    w.String(value.data(), s(value));
  }
  w.EndObject();
  w.Key("body");
  if (body_json != nullptr) {
    body_json->Accept(w);
  } else {
    w.String(body.data(), s(body));
  }
  if (!routing.empty()) {
    w.Key("routing");
    w.RawValue(routing.data(), routing.size(), rapidjson::kObjectType);
  }
  w.EndObject();

  std::lock_guard lock(mutex_);
  std::fwrite(buf.GetString(), 1, buf.GetSize(), file_.get());
  std::fputc('\n', file_.get());
  std::fflush(file_.get());
}

}  // namespace convoy::mock
