// Move-only RAII owners for libcurl's C handles (CURL*, CURLM*, curl_slist*).
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

// A header list. append() returns false when curl could not allocate (the list is kept).
class CurlSlist {
 public:
  CurlSlist() = default;
  bool append(const char* line) noexcept {
    curl_slist* grown = curl_slist_append(list_.get(), line);
    if (grown == nullptr) return false;
    static_cast<void>(list_.release());  // `grown` starts with the old list: one owner
    list_.reset(grown);
    return true;
  }
  curl_slist* get() const noexcept { return list_.get(); }
  void reset() noexcept { list_.reset(); }

 private:
  std::unique_ptr<curl_slist, detail::CurlSlistDeleter> list_;
};

}  // namespace convoy::worker
