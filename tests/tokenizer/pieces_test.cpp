// The tokenizer's pieces on their own: UTF-8 repair, the byte-level alphabet, the Oniguruma to
// PCRE2 translation, BPE merge order and byte fallback, added-token matching, split behaviors
// and decoders. Expected values follow Hugging Face `tokenizers` 0.22 (its docs and sources).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tokenizer/added.hpp"
#include "tokenizer/bpe.hpp"
#include "tokenizer/pipeline.hpp"
#include "tokenizer/regex.hpp"
#include "tokenizer/unicode.hpp"

namespace convoy::tokenizer {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST_CASE("utf8_repair replaces each maximal ill-formed subpart by one U+FFFD, as Python does") {
  CHECK(utf8_valid("plain ascii"));
  CHECK(utf8_valid("\xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));
  CHECK_FALSE(utf8_valid("\xC0\x80"));
  CHECK(utf8_repair("\xC0\x80") == kFffd + kFffd);              // overlong: two
  CHECK(utf8_repair("\xE2\x82") == kFffd);                      // truncated: one
  CHECK(utf8_repair("\xED\xA0\x80") == kFffd + kFffd + kFffd);  // surrogate: three
  CHECK(utf8_repair("\xF0\x9F\x98") == kFffd);                  // truncated 4-byte: one
  CHECK(utf8_repair("a\xFF"
                    "b") == "a" + kFffd + "b");                             // stray byte
  CHECK(utf8_repair("\xF4\x90\x80\x80") == kFffd + kFffd + kFffd + kFffd);  // past U+10FFFF
  CHECK(utf8_repair("\xE2\x82\xAC") == "\xE2\x82\xAC");
}

TEST_CASE("the byte-level alphabet is GPT-2's and inverts") {
  const auto& chars = byte_level_chars();
  CHECK(chars[' '] == "\xC4\xA0");   // Ġ
  CHECK(chars['\n'] == "\xC4\x8A");  // Ċ
  CHECK(chars['a'] == "a");
  CHECK(chars[0xFF] == "\xC3\xBF");
  for (int b = 0; b < 256; ++b) {
    std::size_t i = 0;
    CHECK(byte_level_byte(utf8_next(chars[static_cast<std::size_t>(b)], i)) == b);
  }
  CHECK(byte_level_byte(U'\u2581') == -1);
}

TEST_CASE("Oniguruma's \\s holds U+0085 (NEL); the translation keeps that meaning in PCRE2") {
  CHECK(onig_to_pcre2(R"(\s+(?!\S))") == R"([\s\x{85}]+(?![^\s\x{85}]))");
  CHECK(onig_to_pcre2(R"([^\s\p{L}])") == R"([^\s\x{85}\p{L}])");
  CHECK(onig_to_pcre2(R"([\]\s])") == R"([\]\s\x{85}])");
  const Regex re(onig_to_pcre2(R"(\s+)"));
  std::vector<std::pair<std::size_t, std::size_t>> m;
  re.find_all(
      "a\xC2\x85\xE3\x80\x80"
      "b",
      m);  // NEL then an ideographic space
  REQUIRE(m.size() == 1);
  CHECK(m[0] == std::pair<std::size_t, std::size_t>{1, 6});
  CHECK_THROWS_AS(Regex("(unclosed"), std::invalid_argument);
}

Vocab vocab_of(const std::vector<std::string>& tokens) {
  Vocab v;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    v.insert(tokens[i], static_cast<std::uint32_t>(i));
  return v;
}

std::vector<std::uint32_t> bpe_ids(const Bpe& bpe, std::string_view word) {
  std::vector<std::uint32_t> out;
  bpe.tokenize(word, out);
  return out;
}

TEST_CASE("BPE merges the lowest rank first, leftmost on ties, as word.rs") {
  const std::vector<std::string> tokens = {"a", "b", "c", "ab", "bc", "abc", "aa"};
  SUBCASE("(b c) before (a b)") {
    const Bpe bpe(vocab_of(tokens), {{"b", "c"}, {"a", "b"}, {"a", "bc"}}, {});
    CHECK(bpe_ids(bpe, "abc") == std::vector<std::uint32_t>{5});
    CHECK(bpe_ids(bpe, "abcab") == std::vector<std::uint32_t>{5, 3});
  }
  SUBCASE("(a b) first, then no (ab c) merge") {
    const Bpe bpe(vocab_of(tokens), {{"a", "b"}, {"b", "c"}}, {});
    CHECK(bpe_ids(bpe, "abc") == std::vector<std::uint32_t>{3, 2});
  }
  SUBCASE("a run of one merge pairs from the left") {
    const Bpe bpe(vocab_of(tokens), {{"a", "a"}}, {});
    CHECK(bpe_ids(bpe, "aaaaa") == std::vector<std::uint32_t>{6, 6, 0});
  }
  SUBCASE("a merge naming a string outside the vocabulary is refused") {
    CHECK_THROWS_AS(Bpe(vocab_of(tokens), {{"a", "z"}}, {}), std::invalid_argument);
  }
}

TEST_CASE("BPE: byte fallback, unk fusing, byte-level symbols and ignore_merges") {
  std::vector<std::string> tokens = {"<unk>", "a", "\xE2\x96\x81",
                                     "\xE2\x96\x81"
                                     "a"};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    tokens.emplace_back(hex);
  }
  BpeOptions fallback;
  fallback.byte_fallback = true;
  fallback.unk_id = 0;
  const Bpe bpe(vocab_of(tokens), {{"\xE2\x96\x81", "a"}}, fallback);
  // é is missing: its two bytes <0xC3> <0xA9> (ids 4 + byte).
  CHECK(bpe_ids(bpe,
                "\xE2\x96\x81"
                "a\xC3\xA9") == std::vector<std::uint32_t>{3, 4 + 0xC3, 4 + 0xA9});

  BpeOptions unk;
  unk.unk_id = 0;
  unk.fuse_unk = true;
  const Bpe fused(vocab_of({"<unk>", "a"}), {}, unk);
  CHECK(bpe_ids(fused, "xya") == std::vector<std::uint32_t>{0, 1});
  unk.fuse_unk = false;
  const Bpe unfused(vocab_of({"<unk>", "a"}), {}, unk);
  CHECK(bpe_ids(unfused, "xya") == std::vector<std::uint32_t>{0, 0, 1});

  BpeOptions bl;
  bl.byte_level = true;
  bl.ignore_merges = true;
  const Bpe level(vocab_of({"\xC4\xA0", "h", "i", "\xC4\xA0hi", "hi"}), {{"h", "i"}}, bl);
  CHECK(bpe_ids(level, " hi") == std::vector<std::uint32_t>{3});  // whole word in the vocabulary
  CHECK(bpe_ids(level, "hi ") == std::vector<std::uint32_t>{4, 0});
}

TEST_CASE("Metaspace words split only where no vocabulary string crosses") {
  const std::string s = "\xE2\x96\x81";  // ▁
  const Vocab v = vocab_of({"a", "b", ">", s, s + "a", s + "b", ">" + s + "b"});
  const Bpe bpe(Vocab(v), {{s, "a"}, {s, "b"}, {">", s + "b"}}, {});
  const std::string text = "a" + s + "a>" + s + "b" + s + "b";
  std::vector<std::uint32_t> whole;
  std::vector<std::uint32_t> split;
  bpe.tokenize(text, whole);
  bpe.tokenize_long(text, split);
  CHECK(whole == std::vector<std::uint32_t>{0, 4, 6, 5});
  CHECK(split == whole);
}

std::vector<std::string> split_with(SplitBehavior b, std::string_view text) {
  PreTokenizerStep step;
  step.literal = "-";
  step.behavior = b;
  Pieces p;
  p.arena = text;
  p.spans.emplace_back(0, text.size());
  pre_tokenize({step}, true, p);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < p.spans.size(); ++k) out.emplace_back(p.view(k));
  return out;
}

TEST_CASE("Split behaviors match SplitDelimiterBehavior's documented examples") {
  using V = std::vector<std::string>;
  const std::string t = "the-final--countdown";
  CHECK(split_with(SplitBehavior::kRemoved, t) == V{"the", "final", "countdown"});
  CHECK(split_with(SplitBehavior::kIsolated, t) == V{"the", "-", "final", "-", "-", "countdown"});
  CHECK(split_with(SplitBehavior::kMergedWithPrevious, t) == V{"the-", "final-", "-", "countdown"});
  CHECK(split_with(SplitBehavior::kMergedWithNext, t) == V{"the", "-final", "-", "-countdown"});
  CHECK(split_with(SplitBehavior::kContiguous, t) == V{"the", "-", "final", "--", "countdown"});
}

TEST_CASE("added tokens: leftmost-longest, lstrip/rstrip, single_word") {
  AddedMatcher m;
  m.add({"<a>", 1});
  m.add({"<a><b>", 2});
  m.add({"a>", 3});
  m.add({"<m>", 4, true, true, false});
  m.add({"<w>", 5, false, false, true});
  std::vector<Segment> s;
  const std::string text = "x<a><b>y<a>  <m>  z q <w> r<w>";
  m.split(text, s);
  std::vector<std::pair<std::string, std::uint32_t>> got;
  for (const Segment& g : s) got.emplace_back(text.substr(g.begin, g.end - g.begin), g.id);
  const std::vector<std::pair<std::string, std::uint32_t>> want = {
      {"x", kNoId},   {"<a><b>", 2},   {"y", kNoId}, {"<a>", 1},
      {"  <m>  ", 4}, {"z q ", kNoId}, {"<w>", 5},   {" r<w>", kNoId}};
  CHECK(got == want);
}

TEST_CASE("normalizers: Prepend only on non-empty text, Replace every occurrence, NFC") {
  const std::vector<NormalizerStep> llama = {
      {NormalizerStep::Kind::kPrepend, "", nullptr, "\xE2\x96\x81"},
      {NormalizerStep::Kind::kReplace, " ", nullptr, "\xE2\x96\x81"}};
  std::string s = "a b  c";
  normalize(llama, s);
  CHECK(s ==
        "\xE2\x96\x81"
        "a\xE2\x96\x81"
        "b\xE2\x96\x81\xE2\x96\x81"
        "c");
  std::string empty;
  normalize(llama, empty);
  CHECK(empty.empty());
  std::string decomposed = "Cafe\xCC\x81";
  normalize({{NormalizerStep::Kind::kNfc, "", nullptr, ""}}, decomposed);
  CHECK(decomposed == "Caf\xC3\xA9");
}

DecoderStep dstep(DecoderStep::Kind kind, std::string pattern = "", std::string content = "",
                  std::size_t start = 0) {
  DecoderStep d;
  d.kind = kind;
  d.pattern = std::move(pattern);
  d.content = std::move(content);
  d.start = start;
  return d;
}

TEST_CASE("decoders: byte level, and Llama 2's Replace/ByteFallback/Fuse/Strip chain") {
  using K = DecoderStep::Kind;
  CHECK(decode_tokens({dstep(K::kByteLevel)}, {"Hello", "\xC4\xA0w", "orld\xC4\x8A"}) ==
        "Hello world\n");
  const std::vector<DecoderStep> llama = {dstep(K::kReplace, "\xE2\x96\x81", " "),
                                          dstep(K::kByteFallback), dstep(K::kFuse),
                                          dstep(K::kStrip, "", " ", 1)};
  CHECK(decode_tokens(llama, {"\xE2\x96\x81"
                              "Caf",
                              "<0xC3>", "<0xA9>",
                              "\xE2\x96\x81"
                              "ok"}) == "Caf\xC3\xA9 ok");
  CHECK(decode_tokens({}, {"ab", "ab", "<s>", "a"}) == "ab ab <s> a");  // no decoder: spaces
  // Metaspace: the first token loses every "▁" (as the reference's decoder does), the rest
  // turn them into spaces.
  DecoderStep meta = dstep(K::kMetaspace, "\xE2\x96\x81");
  CHECK(decode_tokens({meta}, {"\xE2\x96\x81\xE2\x96\x81"
                               "a\xE2\x96\x81x",
                               "\xE2\x96\x81"
                               "b"}) == "ax b");
  meta.prepend = false;
  CHECK(decode_tokens({meta}, {"\xE2\x96\x81"
                               "a",
                               "\xE2\x96\x81"
                               "b"}) == " a b");
  // A byte run that is not UTF-8 decodes to one U+FFFD per byte.
  CHECK(decode_tokens(llama, {"a", "<0xC3>", "<0xC3>"}) == "a" + kFffd + kFffd);
}

}  // namespace
}  // namespace convoy::tokenizer
