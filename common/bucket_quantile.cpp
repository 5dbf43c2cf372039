#include "common/bucket_quantile.hpp"

#include <cmath>
#include <cstddef>

namespace convoy {

std::optional<double> bucket_quantile(std::span<const std::pair<double, double>> cumulative,
                                      double q) {
  if (cumulative.empty()) return std::nullopt;
  const double total = cumulative.back().second;
  if (!(total > 0)) return std::nullopt;
  const double rank = q * total;
  double lower_bound = 0;
  double lower_count = 0;
  for (size_t i = 0; i < cumulative.size(); ++i) {
    const auto [le, count] = cumulative[i];
    if (count >= rank) {
      if (std::isinf(le)) {
        if (i == 0) return std::nullopt;
        return cumulative[i - 1].first;
      }
      if (i == 0 && le <= 0) return le;
      const double in_bucket = count - lower_count;
      if (in_bucket <= 0) return le;
      return lower_bound + (le - lower_bound) * (rank - lower_count) / in_bucket;
    }
    lower_bound = le;
    lower_count = count;
  }
  return cumulative.back().first;
}

}  // namespace convoy
