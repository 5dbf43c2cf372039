// UTF-8 checks for text that crosses a trust boundary: what a server sent, what a dataset or
// YAML file holds. Well-formed means RFC 3629 / Unicode Table 3-7: no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequence.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace convoy {

// Byte offset of the first ill-formed sequence in `text`, or std::string_view::npos when all of
// it is well-formed UTF-8. For input validation: "file:line: key: invalid UTF-8 at byte N".
size_t find_invalid_utf8(std::string_view text) noexcept;

inline bool is_valid_utf8(std::string_view text) noexcept {
  return find_invalid_utf8(text) == std::string_view::npos;
}

// `text` with every ill-formed sequence replaced by U+FFFD, one per maximal subpart (the
// Unicode-recommended practice, as WHATWG decoders do): "a\xE2\x82" -> "a\uFFFD",
// "\xFF\xFE" -> "\uFFFD\uFFFD". ASCII bytes are never consumed, so JSON, CSV or HTML built from
// bytes stays structurally the same when sanitized as a whole.
std::string sanitize_utf8(std::string_view text);

// The same in place; returns how many replacements were made (0: `text` is unchanged).
size_t sanitize_utf8_in_place(std::string& text);

}  // namespace convoy
