// A Hugging Face tokenizer.json reader and encoder: byte-level BPE (Qwen3, Llama 3.1,
// DeepSeek V3, gpt-oss) and Metaspace / byte-fallback BPE (Llama 2, Gemma 3). Token ids equal
// the Python `tokenizers` package's `encode(text, add_special_tokens=False).ids` (checked by
// tests/tokenizer against tokenizers 0.22.1). See docs/tokenizer.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::tokenizer {

// A file that is not a tokenizer, broken JSON, or a model/normalizer/pre-tokenizer kind this
// library does not implement. what() names the file and the reason.
struct LoadError : std::runtime_error {
  using runtime_error::runtime_error;
};

class Tokenizer {
 public:
  // path: a tokenizer.json, or a folder holding tokenizer.json (+ tokenizer_config.json).
  // Throws LoadError (what(): names the file and the reason, e.g. unsupported model type
  // "WordPiece").
  static std::unique_ptr<Tokenizer> load(const std::string& path);
  // The same from tokenizer.json's text; name stands for the file in LoadError messages.
  static std::unique_ptr<Tokenizer> load_json(std::string json, const std::string& name);

  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // The ids of text, with no special tokens added (a BOS is not prepended); special and added
  // tokens that appear in the text are recognised as themselves. Invalid UTF-8 is encoded as
  // its repair (U+FFFD per maximal ill-formed subsequence). Thread-safe (const). Throws
  // std::runtime_error only if PCRE2 gives up on a pathological pattern (its JIT stack limit).
  std::vector<std::uint32_t> encode(std::string_view text) const;
  // == encode(text).size().
  std::size_t count(std::string_view text) const;
  // The text of ids (special tokens included as their content). Unknown ids are skipped.
  std::string decode(std::span<const std::uint32_t> ids) const;
  // Number of ids: the model's vocabulary plus added tokens (highest id + 1).
  std::size_t vocab_size() const;
  // The model's type as tokenizer.json names it: "BPE".
  std::string_view model_type() const;

  struct Impl;

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace convoy::tokenizer
