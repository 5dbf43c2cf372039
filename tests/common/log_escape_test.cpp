// log_escape: peer-supplied text (worker ids, hosts, reasons) made safe for one log line.
#include <doctest/doctest.h>

#include <string>

#include "common/curve.hpp"
#include "common/log.hpp"

using convoy::log_escape;

TEST_CASE("log_escape writes control bytes, invalid UTF-8 and backslashes as escapes") {
  CHECK(log_escape("worker-0 on host.example") == "worker-0 on host.example");
  CHECK(log_escape("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // UTF-8 stays
  CHECK(log_escape("a\nb\rc\td") == "a\\x0ab\\x0dc\\x09d");
  CHECK(log_escape("\x1b[31mred") == "\\x1b[31mred");
  CHECK(log_escape("x\xff\xfe") == "x\\xff\\xfe");
  CHECK(log_escape("\xe2\x82") == "\\xe2\\x82");  // a truncated sequence
  CHECK(log_escape("a\\x41") == "a\\\\x41");      // no escape can be forged
  CHECK(log_escape(std::string("nul\0byte", 8)) == "nul\\x00byte");
  CHECK(log_escape("\x7f") == "\\x7f");
}

TEST_CASE("log_escape cuts long text and says how long it was") {
  const std::string long_text(1000, 'a');
  CHECK(log_escape(long_text, 10) == "aaaaaaaaaa...(1000 bytes)");
  CHECK(log_escape(long_text).size() < 300);
  // A multi-byte character cut at the limit is escaped, never split raw.
  CHECK(log_escape("ab\xc3\xa9", 3) == "ab\\xc3...(4 bytes)");
}

TEST_CASE("results tokens are random, hex and compared exactly") {
  const std::string a = convoy::random_token();
  const std::string b = convoy::random_token();
  CHECK(a.size() == 32);
  CHECK(a != b);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(convoy::tokens_equal(a, a));
  CHECK_FALSE(convoy::tokens_equal(a, b));
  CHECK_FALSE(convoy::tokens_equal(a, a.substr(0, 31)));
  CHECK_FALSE(convoy::tokens_equal("", a));
  CHECK(convoy::tokens_equal("", ""));
}
