// Inputs for the integer dot-product tests: random weight rows (encoded, or raw bytes with finite
// scales, which the encoder never writes) and activation rows as the kernels read them.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/integer_dots.h"
#include "kernels/dtype.h"
#include "kernels/quantize.h"

namespace snapstream::test {

inline std::vector<float> random_values(size_t n, std::mt19937& rng, float spread) {
  std::uniform_real_distribution<float> dist(-spread, spread);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// A weight row of `blocks` blocks: encoded from random values, or random bytes with finite scales.
inline std::vector<std::byte> weight_row(kernels::DType dtype, int64_t blocks, bool raw_bytes, std::mt19937& rng) {
  const kernels::BlockLayout layout = kernels::block_layout(dtype);
  std::vector<std::byte> row(static_cast<size_t>(blocks * layout.bytes));
  if (!raw_bytes) {
    const auto values = random_values(static_cast<size_t>(blocks * layout.elements), rng, 1.0f);
    kernels::quantize_row(dtype, values.data(), blocks * layout.elements, row.data());
    return row;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : row) b = static_cast<std::byte>(byte(rng));
  // f16 scales within ±2 (random bytes could be infinities or NaNs).
  std::uniform_real_distribution<float> scale(-2.0f, 2.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    std::byte* block = row.data() + b * layout.bytes;
    std::vector<size_t> scale_offsets = {0};
    if (dtype == kernels::DType::Q4_K || dtype == kernels::DType::Q5_K) scale_offsets = {0, 2};
    if (dtype == kernels::DType::Q6_K) scale_offsets = {208};
    for (size_t offset : scale_offsets) {
      const uint16_t bits = kernels::f32_to_f16(scale(rng));
      std::memcpy(block + offset, &bits, 2);
    }
  }
  return row;
}

inline kernels::cpu::QuantisedRowView view(const kernels::QuantisedRow& row) {
  return {row.q.data(), row.scales.data(), row.sums16.data(), row.biased.data(), row.bias_offsets.data()};
}

}  // namespace snapstream::test
