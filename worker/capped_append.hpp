// Appending to a reply buffer without letting its memory pass a limit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

namespace convoy::worker {

// Appends n bytes the caller has checked fit under `limit` (size() + n <= limit). The buffer
// grows geometrically but its capacity never passes `limit`. (std::string::reserve may round
// a request up to twice the old capacity, so growth builds a string of the exact capacity.)
inline void append_capped(std::string& s, const char* p, size_t n, size_t limit) {
  if (s.size() + n > s.capacity()) {
    std::string bigger;
    bigger.reserve(std::min(std::max(s.capacity() * 2, s.size() + n), limit));
    bigger.append(s);
    s.swap(bigger);
  }
  s.append(p, n);
}

}  // namespace convoy::worker
