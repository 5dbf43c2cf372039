// Move-only RAII owners for libcurl's C handles (CURL*, CURLM*). Header lists are not curl's:
// HttpClient links nodes of its own (worker/http_client.cpp, link_headers()).
#pragma once

#include <curl/curl.h>

#include <memory>

namespace convoy::worker {

namespace detail {
struct CurlEasyDeleter {
  void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* handle) const noexcept { curl_multi_cleanup(handle); }
};
}  // namespace detail

// One easy handle. Default-constructed empty; create() is empty when curl_easy_init failed.
class CurlEasy {
 public:
  CurlEasy() = default;
  static CurlEasy create() { return CurlEasy(curl_easy_init()); }
  CURL* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  explicit CurlEasy(CURL* handle) : handle_(handle) {}
  std::unique_ptr<CURL, detail::CurlEasyDeleter> handle_;
};

// One multi handle. Easy handles must be removed from it before it is destroyed.
class CurlMulti {
 public:
  CurlMulti() = default;
  static CurlMulti create() { return CurlMulti(curl_multi_init()); }
  CURLM* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  void reset() noexcept { handle_.reset(); }

 private:
  explicit CurlMulti(CURLM* handle) : handle_(handle) {}
  std::unique_ptr<CURLM, detail::CurlMultiDeleter> handle_;
};

}  // namespace convoy::worker
