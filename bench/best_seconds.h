// The timing convention of the probes: the best of several passes, what the machine can
// deliver (STREAM's rule), since a pass can only be slowed by whatever else shares the machine.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace snapstream::bench {

template <typename Fn>
double best_seconds(int passes, Fn&& fn) {
  std::vector<double> times;
  for (int p = 0; p < passes; ++p) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return *std::min_element(times.begin(), times.end());
}

}  // namespace snapstream::bench
