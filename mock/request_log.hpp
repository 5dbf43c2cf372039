// --log-requests FILE: one JSON line per request (method, target, headers, body).
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

namespace convoy::mock {

class RequestLog {
 public:
  // Opens `path` for appending; throws std::runtime_error when it cannot.
  explicit RequestLog(const std::string& path);

  // `body_json`: the parsed body, embedded as a value; null writes `body` as a string.
  // `routing`: a JSON object (generation requests: how the mock read and routed the request),
  // written as "routing"; empty = none.
  void write(std::string_view method, std::string_view target,
             const std::vector<std::pair<std::string_view, std::string_view>>& headers,
             std::string_view body, const rapidjson::Value* body_json,
             std::string_view routing = {});

 private:
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::mutex mutex_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

}  // namespace convoy::mock
