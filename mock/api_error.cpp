#include "mock/api_error.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace convoy::mock {

std::string_view status_type(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 415:
      return "Unsupported Media Type";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return status >= 500 ? "Internal Server Error" : "Bad Request";
  }
}

std::string anthropic_error_body(const ApiError& error) {
  const char* type = error.status == 400                          ? "invalid_request_error"
                     : error.status == 401                        ? "authentication_error"
                     : error.status == 403                        ? "permission_error"
                     : error.status == 404                        ? "not_found_error"
                     : error.status == 413                        ? "request_too_large"
                     : error.status == 429                        ? "rate_limit_error"
                     : error.status == 503 || error.status == 529 ? "overloaded_error"
                                                                  : "api_error";
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("type");
  w.String("error");
  w.Key("error");
  w.StartObject();
  w.Key("type");
  w.String(type);
  w.Key("message");
  w.String(error.message.data(), static_cast<rapidjson::SizeType>(error.message.size()));
  w.EndObject();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

std::string error_body(const ApiError& error) {
  if (error.anthropic) return anthropic_error_body(error);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("message");
  w.String(error.message.data(), static_cast<rapidjson::SizeType>(error.message.size()));
  w.Key("type");
  const auto type = status_type(error.status);
  w.String(type.data(), static_cast<rapidjson::SizeType>(type.size()));
  w.Key("code");
  w.Int(error.status);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

ApiError route_not_found(bool legacy_era, std::string_view method, std::string_view path) {
  if (legacy_era) return ApiError{404, "", true, ""};
  return not_found("Route not found: " + std::string(method) + " " + std::string(path));
}

ApiError method_not_allowed(std::string allow) { return ApiError{405, "", true, std::move(allow)}; }

}  // namespace convoy::mock
