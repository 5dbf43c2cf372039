// PCRE2 (UTF, Unicode properties, JIT) over the Oniguruma patterns that tokenizer.json files
// carry (Hugging Face `tokenizers` compiles them with Oniguruma).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace convoy::tokenizer {

// The pattern with Oniguruma's meaning in PCRE2's syntax. The one difference these patterns
// meet: Oniguruma's \s is Unicode White_Space, which holds U+0085 (NEL); PCRE2's \s with UCP
// does not. So \s gains \x{85} and \S loses it.
std::string onig_to_pcre2(std::string_view pattern);

// A compiled pattern; thread-safe to match from several threads (match data and the JIT stack
// are per thread).
class Regex {
 public:
  // Throws std::invalid_argument with PCRE2's message and offset.
  explicit Regex(const std::string& pcre2_pattern);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Every non-overlapping match in s (valid UTF-8) as [begin, end) byte offsets, left to right.
  // An empty match advances one character. Throws std::runtime_error when PCRE2 fails (its
  // JIT stack limit, say).
  void find_all(std::string_view s, std::vector<std::pair<std::size_t, std::size_t>>& out) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace convoy::tokenizer
