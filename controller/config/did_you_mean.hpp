// "Did you mean" suggestions for misspelt names (config keys, enum values, output.dir
// substitutions).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convoy {

// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate to `typed`: within edit distance 2 (1 for names of up to 3 characters),
// or one that starts with what was typed (or vice versa) when the shorter has 3+ characters.
// Ties go to the first candidate in order. nullopt when nothing is close.
std::optional<std::string> closest_match(std::string_view typed,
                                         const std::vector<std::string_view>& candidates);

}  // namespace convoy
