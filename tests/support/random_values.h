// Reproducible random test inputs: standard normal floats from a seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace snapstream::test {

inline std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

}  // namespace snapstream::test
