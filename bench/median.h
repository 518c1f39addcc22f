// The median the benchmarks report: on a noisy machine it ignores the one slow or fast run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace snapstream::bench {

// The middle value; of an even count, the upper of the two middle ones. Empty input gives 0.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

}  // namespace snapstream::bench
