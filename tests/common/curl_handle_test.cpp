// The libcurl handle owners of common/ (curl_handle.hpp).
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "common/curl_handle.hpp"

using convoy::CurlEasy;
using convoy::CurlHeaders;
using convoy::CurlMulti;

TEST_CASE("curl handles: created, moved and released by their owners") {
  CurlEasy empty;
  CHECK_FALSE(empty);
  CurlEasy easy = CurlEasy::create();
  REQUIRE(easy);
  CURL* raw = easy.get();
  CurlEasy moved = std::move(easy);
  CHECK(moved.get() == raw);
  CHECK_FALSE(easy);  // NOLINT(bugprone-use-after-move): a moved-from owner is empty
  moved.reset();
  CHECK_FALSE(moved);

  CurlMulti multi = CurlMulti::create();
  REQUIRE(multi);
  CurlEasy attached = CurlEasy::create();
  REQUIRE(curl_multi_add_handle(multi.get(), attached.get()) == CURLM_OK);
  CHECK(curl_multi_remove_handle(multi.get(), attached.get()) == CURLM_OK);
  multi.reset();
  CHECK_FALSE(multi);
}

TEST_CASE("curl headers: lines appended in order into one list") {
  CurlHeaders headers;
  CHECK(headers.get() == nullptr);
  CHECK(headers.append("Accept: text/plain"));
  curl_slist* head = headers.get();
  REQUIRE(head != nullptr);
  CHECK(headers.append("X-One: 1"));
  CHECK(headers.append("X-Two: 2"));
  CHECK(headers.get() == head);  // the list keeps its first node
  std::string lines;
  for (const curl_slist* node = headers.get(); node != nullptr; node = node->next) {
    lines += std::string(node->data) + "\n";
  }
  CHECK(lines == "Accept: text/plain\nX-One: 1\nX-Two: 2\n");
}
