#include "controller/config/did_you_mean.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace convoy {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool iequal(char a, char b) { return lower(a) == lower(b); }

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), iequal);
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows: the transposition step looks two rows back.
  const std::size_t n = b.size();
  std::vector<std::size_t> two_back(n + 1), prev(n + 1), cur(n + 1);
  for (std::size_t j = 0; j <= n; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t cost = iequal(a[i - 1], b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && iequal(a[i - 1], b[j - 2]) && iequal(a[i - 2], b[j - 1])) {
        cur[j] = std::min(cur[j], two_back[j - 2] + 1);
      }
    }
    std::swap(two_back, prev);
    std::swap(prev, cur);
  }
  return prev[n];
}

std::optional<std::string> closest_match(std::string_view typed,
                                         const std::vector<std::string_view>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : candidates) {
    const std::size_t limit = std::min(typed.size(), candidate.size()) <= 3 ? 1 : 2;
    std::size_t d = edit_distance(typed, candidate);
    if (d > limit) {
      const std::size_t shorter = std::min(typed.size(), candidate.size());
      const bool prefix = istarts_with(candidate, typed) || istarts_with(typed, candidate);
      if (!prefix || shorter < 3) continue;
      d = limit + 1;  // a prefix match ranks after every close spelling
    }
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace convoy
