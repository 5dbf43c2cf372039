// Move-only RAII owners for libcurl's C handles: an easy handle (CURL*), a multi handle (CURLM*)
// and a header list (curl_slist*). Every process that speaks HTTP (the worker's client, the
// controller's telemetry scraper and session probe) owns its handles through these.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>

namespace convoy {

namespace detail {
struct CurlEasyDeleter {
  void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* handle) const noexcept { curl_multi_cleanup(handle); }
};
struct CurlSlistDeleter {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
}  // namespace detail

// One easy handle. Default-constructed empty; create() is empty when curl_easy_init failed.
class CurlEasy {
 public:
  CurlEasy() = default;
  static CurlEasy create() { return CurlEasy(curl_easy_init()); }
  CURL* get() const noexcept { return handle_.get(); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  void reset() noexcept { handle_.reset(); }

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

// A header list (CURLOPT_HTTPHEADER). It must outlive every transfer that uses it: libcurl
// reads it but does not copy it.
class CurlHeaders {
 public:
  // Appends one "Name: value" line; false (the list unchanged) when curl could not allocate.
  bool append(const std::string& line) {
    curl_slist* head = curl_slist_append(list_.get(), line.c_str());
    if (head == nullptr) return false;
    if (!list_) list_.reset(head);  // the first node is the list; later ones join it
    return true;
  }
  curl_slist* get() const noexcept { return list_.get(); }

 private:
  std::unique_ptr<curl_slist, detail::CurlSlistDeleter> list_;
};

}  // namespace convoy
