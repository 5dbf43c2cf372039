// The insight with this id among a report's insights, or nullptr.
#pragma once

#include <string>
#include <vector>

#include "controller/report/insights.hpp"

namespace convoy::test {

inline const controller::Insight* find_insight(const std::vector<controller::Insight>& insights,
                                               const std::string& id) {
  for (const auto& i : insights) {
    if (i.id == id) return &i;
  }
  return nullptr;
}

}  // namespace convoy::test
