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

// Every block's f16 scales set to random values within ±2 (random bytes could be infinities or NaNs).
inline void set_finite_scales(kernels::DType dtype, std::vector<std::byte>& row, std::mt19937& rng) {
  const kernels::BlockLayout layout = kernels::block_layout(dtype);
  std::vector<size_t> scale_offsets = {0};
  if (dtype == kernels::DType::Q4_K || dtype == kernels::DType::Q5_K) scale_offsets = {0, 2};
  if (dtype == kernels::DType::Q6_K) scale_offsets = {208};
  std::uniform_real_distribution<float> scale(-2.0f, 2.0f);
  for (size_t at = 0; at + static_cast<size_t>(layout.bytes) <= row.size(); at += static_cast<size_t>(layout.bytes))
    for (size_t offset : scale_offsets) {
      const uint16_t bits = kernels::f32_to_f16(scale(rng));
      std::memcpy(row.data() + at + offset, &bits, 2);
    }
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
  set_finite_scales(dtype, row, rng);
  return row;
}

// A weight row of `blocks` blocks whose every byte but the f16 scales is `fill`: 0xFF gives the
// K-quants their largest values, scales and mins, 0x80 gives Q8_0 -128, 0x00 Q4_0/Q5_0 -8 and -16.
inline std::vector<std::byte> filled_weight_row(kernels::DType dtype, int64_t blocks, std::byte fill, std::mt19937& rng) {
  std::vector<std::byte> row(static_cast<size_t>(blocks * kernels::block_layout(dtype).bytes), fill);
  set_finite_scales(dtype, row, rng);
  return row;
}

inline kernels::cpu::QuantisedRowView view(const kernels::QuantisedRow& row) {
  return {row.q.data(), row.scales.data(), row.sums16.data(), row.biased.data(), row.bias_offsets.data(),
          row.sub_sum_pairs.data()};
}

}  // namespace snapstream::test
