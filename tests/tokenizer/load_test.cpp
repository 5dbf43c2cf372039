// Tokenizer::load on bad input (each error names the file and the reason), and the whole
// pipeline on a small tokenizer.json written by the test: specials, invalid UTF-8, threads.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>

#include "test_util.hpp"
#include "tokenizer/tokenizer.hpp"

namespace convoy::tokenizer {
namespace {

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// The LoadError message of loading path, or "" when it loads.
std::string load_error(const std::string& path) {
  try {
    Tokenizer::load(path);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "";
}

// A Llama-2-shaped tokenizer (Prepend + Replace normalizers, byte fallback, specials) small
// enough to read: ids 0..2 specials, 3..258 the byte tokens, then the pieces below.
std::string small_tokenizer_json() {
  std::string vocab = R"("<unk>": 0, "<s>": 1, "</s>": 2)";
  for (int b = 0; b < 256; ++b) {
    char hex[16];
    std::snprintf(hex, sizeof hex, R"(, "<0x%02X>": %d)", b, 3 + b);
    vocab += hex;
  }
  vocab += R"(, "▁": 259, "h": 260, "i": 261, "hi": 262, "▁hi": 263, "!": 264)";
  return R"({"version": "1.0", "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true, "normalized": false},
    {"id": 1, "content": "<s>", "special": true, "normalized": false},
    {"id": 2, "content": "</s>", "special": true, "normalized": false}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
    {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true,
    "vocab": {)" +
         vocab + R"(}, "merges": ["h i", "▁ hi"]}})";
}

TEST_CASE("load: bad input names the file and the reason") {
  const test::TempDir tmp("convoy-tokload-");
  const std::string dir = tmp.path().string();
  SUBCASE("no such file") {
    CHECK(load_error(dir + "/missing.json") ==
          dir + "/missing.json: cannot open (no such file, or not readable)");
  }
  SUBCASE("a folder without tokenizer.json") {
    CHECK(load_error(dir) == dir + ": a folder without tokenizer.json");
  }
  SUBCASE("broken JSON: the byte offset and RapidJSON's reason") {
    write(tmp.path() / "broken.json", R"({"model": {"type": "BPE", )");
    const std::string e = load_error(dir + "/broken.json");
    CHECK(e.find(dir + "/broken.json: not valid JSON at byte ") == 0);
    CHECK(e.find("Missing a name for object member") != std::string::npos);
  }
  SUBCASE("JSON that is not a tokenizer (a tokenizer_config.json)") {
    write(tmp.path() / "tokenizer_config.json", R"({"add_bos_token": true})");
    CHECK(load_error(dir + "/tokenizer_config.json") ==
          dir + "/tokenizer_config.json: not a tokenizer.json (no \"model\")");
  }
  SUBCASE("an unsupported model type, named") {
    write(tmp.path() / "wp.json", R"({"model": {"type": "WordPiece", "vocab": {}}})");
    CHECK(load_error(dir + "/wp.json") ==
          dir + "/wp.json: unsupported model type \"WordPiece\" (convoy reads BPE tokenizers)");
  }
  SUBCASE("an unsupported normalizer, named") {
    write(tmp.path() / "lc.json", R"({"normalizer": {"type": "Lowercase"},
      "model": {"type": "BPE", "vocab": {}, "merges": []}})");
    CHECK(load_error(dir + "/lc.json") == dir + "/lc.json: unsupported normalizer \"Lowercase\"");
  }
  SUBCASE("a merge of strings outside the vocabulary") {
    write(tmp.path() / "merge.json",
          R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})");
    CHECK(load_error(dir + "/merge.json") ==
          dir + "/merge.json: model: merge 0 (\"a\" \"b\") names a string not in the vocabulary");
  }
}

TEST_CASE("a small Llama-2-shaped tokenizer: specials, byte fallback, invalid UTF-8, decode") {
  const test::TempDir tmp("convoy-toksmall-");
  write(tmp.path() / "tokenizer.json", small_tokenizer_json());
  const auto tok = Tokenizer::load(tmp.path().string());  // the folder form
  CHECK(tok->model_type() == "BPE");
  CHECK(tok->vocab_size() == 265);
  using Ids = std::vector<std::uint32_t>;
  // Each segment between specials gets its own "▁" (Prepend runs per segment, as in the
  // reference): "hi" -> "▁hi".
  CHECK(tok->encode("hi") == Ids{263});
  CHECK(tok->encode("hi<s>hi!") == Ids{263, 1, 263, 264});
  CHECK(tok->encode("</s>") == Ids{2});
  // "é" is not in the vocabulary: its bytes.
  CHECK(tok->encode("h\xC3\xA9") == Ids{259, 260, 3 + 0xC3, 3 + 0xA9});
  CHECK(tok->count("hi<s>hi!") == 4);
  CHECK(tok->decode(tok->encode("hi h\xC3\xA9!")) == "hi h\xC3\xA9!");
  // Invalid UTF-8 is encoded as its repair (U+FFFD per maximal bad subpart), as Python's
  // bytes.decode(errors="replace") would hand it to the reference.
  CHECK(tok->encode("hi\xFF") == tok->encode("hi\xEF\xBF\xBD"));
  CHECK(tok->encode("").empty());
}

TEST_CASE("encode is thread-safe: four threads agree with one") {
  const test::TempDir tmp("convoy-tokthreads-");
  write(tmp.path() / "tokenizer.json", small_tokenizer_json());
  const auto tok = Tokenizer::load((tmp.path() / "tokenizer.json").string());
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) {
    texts.push_back("hi " + std::string(static_cast<std::size_t>(i % 7), 'h') + "i!<s>\xC3\xA9" +
                    std::to_string(i));
  }
  std::vector<std::vector<std::uint32_t>> want;
  for (const auto& t : texts) want.push_back(tok->encode(t));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (std::size_t i = 0; i < texts.size(); ++i) {
          if (tok->encode(texts[i]) != want[i]) ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

}  // namespace
}  // namespace convoy::tokenizer
