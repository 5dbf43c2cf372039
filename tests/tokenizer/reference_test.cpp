// Token ids equal the reference's (Hugging Face `tokenizers` 0.22.1 from PyPI, run here) for
// each of the six real tokenizers, over a corpus of more than 1 MB built by the test.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

#include "test_util.hpp"
#include "tokenizer/corpus.hpp"
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/tokenizer_test_util.hpp"

namespace convoy::tokenizer {
namespace {

constexpr std::size_t kCorpusBytes = (1U << 20) + (64U << 10);  // > 1 MB before the specials

std::string escaped(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7F) {
      std::array<char, 8> hex{};
      std::snprintf(hex.data(), hex.size(), "\\x%02X", b);
      out += hex.data();
    } else {
      out += c;
    }
  }
  return out;
}

// The first difference of a document, with the tokens around it, for the failure message.
std::string describe(const Tokenizer& tok, const std::string& doc,
                     const std::vector<std::uint32_t>& ours,
                     const std::vector<std::uint32_t>& theirs) {
  std::size_t at = 0;
  while (at < ours.size() && at < theirs.size() && ours[at] == theirs[at]) ++at;
  const auto around = [&](const std::vector<std::uint32_t>& ids) {
    std::string s;
    for (std::size_t k = at >= 3 ? at - 3 : 0; k < std::min(ids.size(), at + 4); ++k) {
      const std::uint32_t one[] = {ids[k]};
      s += std::to_string(ids[k]) + "[" + escaped(tok.decode(one)) + "] ";
    }
    return s;
  };
  return "ids differ at " + std::to_string(at) + " of " + std::to_string(ours.size()) + "/" +
         std::to_string(theirs.size()) + "\n  ours:   " + around(ours) +
         "\n  theirs: " + around(theirs) + "\n  doc: " + escaped(doc.substr(0, 400));
}

// Llama 2's tokenizer.json rewritten the way newer conversions (Mistral's, say) spell the same
// idea: no normalizer, a Metaspace pre-tokenizer and decoder. Written into dir.
void write_metaspace_variant(const std::string& llama2_dir, const std::filesystem::path& dir,
                             const char* prepend_scheme, bool split) {
  std::ifstream in(std::filesystem::path(llama2_dir) / "tokenizer.json", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(ss.str().c_str());
  REQUIRE(doc.IsObject());
  auto& a = doc.GetAllocator();
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("type", "Metaspace", a);
  meta.AddMember("replacement", "\xE2\x96\x81", a);
  meta.AddMember("prepend_scheme", rapidjson::StringRef(prepend_scheme), a);
  meta.AddMember("split", split, a);
  doc["normalizer"].SetNull();
  doc["pre_tokenizer"].CopyFrom(meta, a);
  doc["decoder"].CopyFrom(meta, a);
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / "tokenizer.json", std::ios::binary);
  out << test::to_json(doc);
  REQUIRE(out.good());
}

void check_against_reference(const std::string& name, bool round_trips,
                             const char* metaspace_scheme = nullptr, bool metaspace_split = false) {
  std::string why;
  std::string dir = test::tokenizers_script(name, &why);
  const std::string python = dir.empty() ? "" : test::tokenizers_script("--reference", &why);
  if (python.empty()) {
    MESSAGE("skipped: " << why);
    return;
  }
  const test::TempDir variant("convoy-tokvariant-");
  if (metaspace_scheme != nullptr) {
    write_metaspace_variant(dir, variant.path() / "m", metaspace_scheme, metaspace_split);
    dir = (variant.path() / "m").string();
  }
  const auto json = std::filesystem::path(dir) / "tokenizer.json";
  const auto start = std::chrono::steady_clock::now();
  const auto tok = Tokenizer::load(dir);
  const auto loaded = std::chrono::steady_clock::now();
  const auto specials = test::added_token_contents(json);
  const auto docs = test::build_corpus(specials, kCorpusBytes);
  std::size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  REQUIRE(bytes >= (1U << 20));

  const test::TempDir tmp("convoy-tokref-");
  test::write_jsonl(tmp.path() / "corpus.jsonl", docs);
  std::string out;
  const std::string cmd =
      test::quoted(python) + " " +
      test::quoted(std::string(CONVOY_SOURCE_DIR) + "/scripts/tokenizer_ids.py") + " " +
      test::quoted(json.string()) + " " + test::quoted((tmp.path() / "corpus.jsonl").string()) +
      " " + test::quoted((tmp.path() / "ids.txt").string()) + " " +
      test::quoted((tmp.path() / "decoded.jsonl").string());
  REQUIRE(test::run_capture(cmd, out) == 0);
  const auto reference = test::read_id_lines(tmp.path() / "ids.txt");
  REQUIRE(reference.size() == docs.size());
  const auto decoded = test::read_jsonl_strings(tmp.path() / "decoded.jsonl");
  REQUIRE(decoded.size() == docs.size());

  const auto encode_start = std::chrono::steady_clock::now();
  std::size_t mismatched = 0;
  std::size_t tokens = 0;
  std::size_t round_trip_failures = 0;
  std::size_t decode_mismatches = 0;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto ids = tok->encode(docs[i]);
    tokens += ids.size();
    if (ids != reference[i] && ++mismatched <= 3) {
      FAIL_CHECK(name << " document " << i << ": " << describe(*tok, docs[i], ids, reference[i]));
    }
    // Text holding "▁" cannot come back from a tokenizer whose decoder turns it into " ".
    const bool metaspace_char = docs[i].find("\xE2\x96\x81") != std::string::npos;
    if (round_trips && !metaspace_char && tok->decode(ids) != docs[i]) ++round_trip_failures;
    // decode agrees with the reference's decode(ids, skip_special_tokens=False).
    if (tok->decode(reference[i]) != decoded[i] && ++decode_mismatches <= 3) {
      FAIL_CHECK(name << " document " << i << " decodes to \""
                      << escaped(tok->decode(reference[i]).substr(0, 300)) << "\"\n  reference: \""
                      << escaped(decoded[i].substr(0, 300)) << "\"");
    }
  }
  const auto end = std::chrono::steady_clock::now();
  const auto ms = [](auto d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  MESSAGE(json.string() << ": " << docs.size() << " documents, " << bytes << " bytes, " << tokens
                        << " tokens, " << specials.size() << " added tokens; load "
                        << ms(loaded - start) << " ms, encode " << ms(end - encode_start) << " ms");
  CHECK(mismatched == 0);
  CHECK(round_trip_failures == 0);
  CHECK(decode_mismatches == 0);
}

TEST_CASE("qwen3: ids equal Hugging Face tokenizers over a 1 MB corpus") {
  check_against_reference("qwen3", false);  // NFC changes some text: no round trip
}

TEST_CASE("llama3_1: ids equal Hugging Face tokenizers over a 1 MB corpus") {
  check_against_reference("llama3_1", true);
}

TEST_CASE("deepseek_v3: ids equal Hugging Face tokenizers over a 1 MB corpus") {
  check_against_reference("deepseek_v3", true);
}

TEST_CASE("gptoss: ids equal Hugging Face tokenizers over a 1 MB corpus") {
  check_against_reference("gptoss", true);
}

TEST_CASE("gemma3: ids equal Hugging Face tokenizers over a 1 MB corpus") {
  check_against_reference("gemma3", true);
}

TEST_CASE("llama2: ids equal Hugging Face tokenizers over a 1 MB corpus") {
  check_against_reference("llama2", false);  // the prepended "▁" of each segment stays
}

TEST_CASE(
    "llama2 as a Metaspace pre-tokenizer (prepend first, no split): ids equal the reference") {
  check_against_reference("llama2", false, "first", false);
}

TEST_CASE("llama2 as a Metaspace pre-tokenizer (prepend always, split): ids equal the reference") {
  check_against_reference("llama2", false, "always", true);
}

}  // namespace
}  // namespace convoy::tokenizer
