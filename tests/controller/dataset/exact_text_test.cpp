// ExactText (controller/dataset/exact_text.hpp) against counters whose counts are known by
// construction: one that adds up word by word, and convoy-mock's 4-bytes rule, which does not.
#include <doctest/doctest.h>

#include <string>

#include "controller/config/config.hpp"
#include "controller/dataset/exact_text.hpp"

namespace convoy::controller {
namespace {

// Each space-separated piece counts 1 + bytes / 5 (so long words are several tokens): the
// count of a text is the sum over its words, as in a real tokenizer that splits at spaces.
class WordCounter final : public TokenCounter {
 public:
  int64_t count(std::string_view text) const override {
    ++calls;
    int64_t tokens = 0;
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find(' ', begin + 1);
      if (end == std::string_view::npos) end = text.size();
      tokens += 1 + static_cast<int64_t>(end - begin) / 5;
      begin = end;
    }
    return tokens;
  }
  std::string source() const override { return "word counter"; }
  mutable int64_t calls = 0;
};

// ceil(bytes / 4) of the whole text: convoy-mock's rule; words do not add up.
class FourBytes final : public TokenCounter {
 public:
  int64_t count(std::string_view text) const override {
    return static_cast<int64_t>((text.size() + 3) / 4);
  }
  std::string source() const override { return "four bytes"; }
};

}  // namespace

TEST_CASE("ExactText cuts text of exactly the tokens asked, by the counter's own counts") {
  const WordCounter counter;
  const ExactText exact(Corpus::embedded(), counter);
  CHECK(exact.corpus_tokens() ==
        counter.count(Corpus::embedded().text().substr(0, Corpus::embedded().size_bytes() - 1)));
  // Words are counted once each, not once per occurrence (~3,300 distinct of ~9,800).
  CHECK(counter.calls < 5000);

  SUBCASE("every length from 0 to 300 and a few large ones, bare and after a tag") {
    for (int64_t tokens : {0, 1, 2, 3, 7, 16, 128, 299, 1000, 8000, 100000}) {
      for (const uint64_t position : {0ull, 17ull, 55000ull, 123456789ull}) {
        std::string bare;
        exact.append(bare, position, tokens, false);
        CHECK(counter.count(bare) == tokens);
        CHECK((bare.empty() || bare.front() != ' '));
        std::string tagged = "[c42]";
        exact.append(tagged, position, tokens, true);
        CHECK(counter.count(tagged) == tokens + exact.tag_tokens("[c42]"));
      }
    }
  }
  SUBCASE("the same position gives the same text") {
    std::string a;
    std::string b;
    exact.append(a, 999, 500, false);
    exact.append(b, 999, 500, false);
    CHECK(a == b);
  }
  SUBCASE("tag shapes: counted by the number of digits") {
    CHECK(exact.tag_tokens("[c0]") == counter.count("[c7]"));
    CHECK(exact.tag_tokens("[c12345678901234567890]") == counter.count("[c12345678901234567890]"));
    CHECK(exact.tag_tokens("[c12s3]") == counter.count("[c12s3]"));
    CHECK_THROWS_AS(exact.tag_tokens("[x1]"), ExactTokensError);
  }
  SUBCASE("a negative count is refused, naming it") {
    std::string out;
    CHECK_THROWS_WITH_AS(exact.append(out, 0, -3, false), "cannot make a text of -3 tokens",
                         ExactTokensError);
  }
}

TEST_CASE("ExactText refuses a counter whose words do not add up, naming it and the counts") {
  const FourBytes counter;
  try {
    ExactText exact(Corpus::embedded(), counter);
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    CHECK(what.find("dataset.tokenizer: four bytes: the corpus counts") != std::string::npos);
    CHECK(what.find("merges across spaces") != std::string::npos);
  }
}

}  // namespace convoy::controller
