// UTF-8 and Unicode helpers of the tokenizer: decoding, repair of invalid input, the GPT-2
// byte-level alphabet, and the character classes Rust's `char` methods use (via ICU).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace convoy::tokenizer {

// Bytes of the UTF-8 character that starts at s[i] (1 for a stray byte); s must be valid.
std::size_t utf8_length(std::string_view s, std::size_t i);
// The code point at s[i], advancing i past it; s must be valid UTF-8.
char32_t utf8_next(std::string_view s, std::size_t& i);
void utf8_append(std::string& out, char32_t cp);

// Whether s is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool utf8_valid(std::string_view s);
// s with each maximal ill-formed subsequence replaced by U+FFFD (as Python's
// bytes.decode(errors="replace") does): what the reference sees for the same bytes.
std::string utf8_repair(std::string_view s);

// GPT-2's byte-level alphabet: byte b is the character byte_level_char(b) (UTF-8, 1-2 bytes).
const std::array<std::string, 256>& byte_level_chars();
// The byte whose byte-level character is cp, or -1.
int byte_level_byte(char32_t cp);

// Rust's char::is_whitespace (White_Space) and char::is_alphanumeric (Alphabetic or N*).
bool is_whitespace(char32_t cp);
bool is_alphanumeric(char32_t cp);

}  // namespace convoy::tokenizer
