// libFuzzer target for the tokenizer (tokenizer/). Three small tokenizers shaped like the real
// ones (byte-level with Qwen3's pattern, the same under NFC, Llama 2's Metaspace form with byte
// fallback) encode every input, valid UTF-8 or not. Beyond "does not crash": count() equals
// encode().size(), and the byte-level one decodes back to the input (invalid UTF-8 repaired),
// its central promise. An input starting "{" is also loaded as a tokenizer.json: it is refused
// with a LoadError or loads and encodes a fixed text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer/unicode.hpp"

namespace {

using convoy::tokenizer::Tokenizer;

std::string json_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string byte_level_json(bool nfc) {
  const auto& chars = convoy::tokenizer::byte_level_chars();
  std::string vocab;
  for (std::size_t b = 0; b < 256; ++b) {
    vocab += (b ? ", \"" : "\"") + json_escape(chars[b]) + "\": " + std::to_string(b);
  }
  vocab += R"(, "Ġt": 256, "he": 257, "Ġthe": 258, "ĠĠ": 259, "ĠĠĠĠ": 260, "in": 261)";
  const std::string pattern =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+)";
  return std::string(R"({"added_tokens": [
    {"id": 300, "content": "<|im_start|>", "special": true, "normalized": false},
    {"id": 301, "content": "<|im_end|>", "special": true, "normalized": false},
    {"id": 302, "content": "<think>", "special": false, "normalized": true}],
  "normalizer": )") +
         (nfc ? R"({"type": "NFC"})" : "null") + R"(,
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": ")" +
         pattern + R"("}, "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {)" +
         vocab + R"(}, "merges": ["Ġ t", "h e", "Ġt he", "Ġ Ġ", "ĠĠ ĠĠ", "i n"]}})";
}

std::string metaspace_json() {
  std::string vocab = R"("<unk>": 0, "<s>": 1, "</s>": 2)";
  for (int b = 0; b < 256; ++b) {
    char hex[32];
    std::snprintf(hex, sizeof hex, R"(, "<0x%02X>": %d)", b, 3 + b);
    vocab += hex;
  }
  vocab += R"(, "▁": 259, "h": 260, "i": 261, "hi": 262, "▁hi": 263, "!": 264, "▁▁": 265)";
  return R"({"added_tokens": [{"id": 1, "content": "<s>", "special": true, "normalized": false}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
    {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true,
    "vocab": {)" +
         vocab + R"(}, "merges": ["h i", "▁ hi", "▁ ▁"]}})";
}

struct Tokenizers {
  std::unique_ptr<Tokenizer> byte_level = Tokenizer::load_json(byte_level_json(false), "bl");
  std::unique_ptr<Tokenizer> nfc = Tokenizer::load_json(byte_level_json(true), "nfc");
  std::unique_ptr<Tokenizer> metaspace = Tokenizer::load_json(metaspace_json(), "ms");
};

void check_counts(const Tokenizer& tok, std::string_view text) {
  if (tok.count(text) != tok.encode(text).size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Tokenizers t;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ids = t.byte_level->encode(text);
  if (t.byte_level->decode(ids) != convoy::tokenizer::utf8_repair(text)) std::abort();
  check_counts(*t.byte_level, text);
  check_counts(*t.nfc, text);
  check_counts(*t.metaspace, text);
  (void)t.metaspace->decode(t.metaspace->encode(text));
  if (!text.empty() && text[0] == '{') {
    try {
      const auto tok = Tokenizer::load_json(std::string(text), "fuzz.json");
      (void)tok->encode("Hello, world! 123 <s> ▁x");
    } catch (const std::exception&) {
      // A LoadError, or a pathological pattern's match failure: a refusal, not a crash.
    }
  }
  return 0;
}
