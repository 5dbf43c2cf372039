#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>

#include "controller/dataset/corpus.hpp"

namespace convoy::controller {

TEST_CASE("token estimate: ceil(bytes / 4)") {
  CHECK(estimate_tokens("") == 0);
  CHECK(estimate_tokens("abc") == 1);
  CHECK(estimate_tokens("abcd") == 1);
  CHECK(estimate_tokens("abcde") == 2);
  CHECK(bytes_for_tokens(10) == 40);
  CHECK(bytes_for_tokens(0) == 0);
  CHECK(bytes_for_tokens(-3) == 0);
  CHECK(estimate_tokens(std::string(bytes_for_tokens(123), 'x')) == 123);
}

TEST_CASE("a corpus is normalized to single-spaced printable ASCII") {
  const Corpus corpus("  One\ttwo\n\nthree \xC3\xA9 four.  ");
  CHECK(corpus.text() == "One two three four. ");
  CHECK_THROWS_AS(Corpus("\n\t  \x01"), std::invalid_argument);
}

TEST_CASE("excerpts have the exact length, start on a word and wrap around") {
  const Corpus corpus("alpha beta gamma delta");
  SUBCASE("from a word start") { CHECK(corpus.excerpt(0, 10) == "alpha beta"); }
  SUBCASE("mid-word positions move to the next word") {
    CHECK(corpus.excerpt(2, 4) == "beta");
    CHECK(corpus.excerpt(6, 4) == "beta");  // already at a word start
  }
  SUBCASE("past the last word it wraps to the first") { CHECK(corpus.excerpt(19, 5) == "alpha"); }
  SUBCASE("longer than the corpus: it repeats") {
    const std::string text = corpus.excerpt(0, 50);
    CHECK(text.size() == 50);
    CHECK(text.rfind("alpha beta gamma delta alpha beta", 0) == 0);
  }
  SUBCASE("positions are taken modulo the size") {
    CHECK(corpus.excerpt(corpus.size_bytes() * 3 + 6, 4) == "beta");
  }
}

TEST_CASE("the embedded corpus is the shipped prose") {
  const Corpus& corpus = Corpus::embedded();
  CHECK(&corpus == &Corpus::embedded());
  CHECK(corpus.size_bytes() > 40000);
  CHECK(corpus.text().find("lighthouse") != std::string_view::npos);
  CHECK(std::all_of(corpus.text().begin(), corpus.text().end(),
                    [](char c) { return c >= ' ' && c < 0x7F; }));
}

}  // namespace convoy::controller
