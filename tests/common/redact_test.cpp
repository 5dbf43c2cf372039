// redact_url / redact_urls_in: the password of a URL's userinfo never reaches an output.
#include <doctest/doctest.h>

#include <string>

#include "common/redact.hpp"

using convoy::redact_url;
using convoy::redact_urls_in;

TEST_CASE("redact_url replaces the password of user:password@ and nothing else") {
  CHECK(redact_url("http://me:s3cret@h:8000/v1/chat") == "http://me:<redacted>@h:8000/v1/chat");
  CHECK(redact_url("https://me:s3cret@h") == "https://me:<redacted>@h");
  CHECK(redact_url("http://me:p%40ss@h/x?y=1") == "http://me:<redacted>@h/x?y=1");
  CHECK(redact_url("http://me:a:b@h/") == "http://me:<redacted>@h/");
  CHECK(redact_url("http://me:@h/") == "http://me:<redacted>@h/");
  SUBCASE("no password: unchanged") {
    for (const char* u : {"http://h:8000/v1", "http://me@h/", "mock", "", "http://",
                          "http://h/path@with:colon", "http://h?q=a:b@c"}) {
      CHECK(redact_url(u) == u);
    }
  }
}

TEST_CASE("redact_urls_in redacts every URL in free text") {
  CHECK(redact_urls_in("frontend (http://a:pw1@h1/metrics): connect: refused; "
                       "then https://b:pw2@h2:9/x") ==
        "frontend (http://a:<redacted>@h1/metrics): connect: refused; "
        "then https://b:<redacted>@h2:9/x");
  CHECK(redact_urls_in("target.urls[0] http://u:pw@h:1 unreachable") ==
        "target.urls[0] http://u:<redacted>@h:1 unreachable");
  CHECK(redact_urls_in("no url here: a:b@c") == "no url here: a:b@c");
  CHECK(redact_urls_in("\"http://u:pw@h\"") == "\"http://u:<redacted>@h\"");
  CHECK(redact_urls_in("") == "");
}
