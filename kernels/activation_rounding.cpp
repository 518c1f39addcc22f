// Q8_0 and Q8_K rounding of activation blocks, with the scale conventions of each format.
#include "kernels/activation_rounding.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/activation_blocks.h"

namespace snapstream::kernels {
namespace {

void round_q8_0(const float* x, int64_t n, float* out) {
  int8_t q[32];
  float scale = 0.0f;
  quantize_q8_0_block(x, n, q, scale);
  for (int64_t i = 0; i < n; ++i) out[i] = scale * static_cast<float>(q[i]);
}

void round_q8_k(const float* x, int64_t n, float* out) {
  int8_t q[256];
  float scale = 0.0f;
  quantize_q8_k_block(x, n, q, scale);
  for (int64_t i = 0; i < n; ++i) out[i] = scale * static_cast<float>(q[i]);
}

}  // namespace

// The value of largest magnitude maps to -127 (scale -max / 127, kept in f32); the opposite
// end may round to 128, which is clamped to 127.
void quantize_q8_k_block(const float* x, int64_t n, int8_t* q, float& scale) {
  // The first value of the largest magnitude, found as the largest magnitude and then its first
  // holder. Sixteen running maxima and a test of sixteen values at a time vectorise; a single
  // running maximum is a chain of dependent steps (it took most of a decode step's quantising).
  constexpr int64_t kLanes = 16;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = std::max(lanes[l], std::fabs(x[i + l]));
  float largest = 0.0f;
  for (; i < n; ++i) largest = std::max(largest, std::fabs(x[i]));
  for (const float lane : lanes) largest = std::max(largest, lane);
  float extreme = 0.0f;
  if (largest != 0.0f) {
    int64_t first = 0;
    for (; first + kLanes <= n; first += kLanes) {
      bool holds = false;
      for (int64_t l = 0; l < kLanes; ++l) holds |= std::fabs(x[first + l]) == largest;
      if (holds) break;
    }
    while (std::fabs(x[first]) != largest) ++first;
    extreme = x[first];
  }
  if (extreme == 0.0f) {
    std::fill_n(q, n, int8_t{0});
    scale = 0.0f;
    return;
  }
  const float inverse = -127.0f / extreme;
  scale = 1.0f / inverse;
  for (int64_t i = 0; i < n; ++i) q[i] = static_cast<int8_t>(std::min(127.0f, std::nearbyint(inverse * x[i])));
}

void quantize_q8_0_block(const float* x, int64_t n, int8_t* q, float& scale) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
  scale = f16_to_f32(f32_to_f16(amax / 127.0f));
  for (int64_t i = 0; i < n; ++i) {
    // NaN has no integer (nor has an infinity times the zero inverse an infinite amax gives), and
    // converting it would be undefined: it rounds to 0.
    const float rounded = std::nearbyint(x[i] * inverse);
    q[i] = rounded == rounded ? static_cast<int8_t>(std::clamp(rounded, -127.0f, 127.0f)) : int8_t{0};
  }
}

namespace {
// QuantisedRow::sub_sum_pairs from sums16: made once per row, where every matrix and every group
// of weight rows meets them (unpacked per group and block instead, with scalar moves between
// registers, they took about a tenth of the Q4_K row-group kernel's time at 16 rows: sampled, its
// dot-product loop's share rose from 68% to 74-76% in two runs when they moved here).
void pair_sub_block_sums(const int16_t* sums16, int64_t blocks, int32_t* pairs) {
  for (int64_t b = 0; b < blocks; ++b, sums16 += 16)
    for (int k = 0; k < 4; ++k) {
      const int first = 4 * (k / 2) + k % 2;  // the pair's sub-blocks: first and first + 2
      const auto low = static_cast<uint16_t>(sums16[2 * first] + sums16[2 * first + 1]);
      const auto high = static_cast<uint16_t>(sums16[2 * first + 4] + sums16[2 * first + 5]);
      pairs[4 * b + k] = static_cast<int32_t>(low | static_cast<uint32_t>(high) << 16);
    }
}
}  // namespace

void quantise_activation_row(DType weight_dtype, const float* x, int64_t n, QuantisedRow& row) {
  row.block = activation_block(weight_dtype);
  const int64_t blocks = n / row.block;
  row.q.resize(static_cast<size_t>(n));
  row.scales.resize(static_cast<size_t>(blocks));
  if (row.block == 32) {
    row.biased.resize(static_cast<size_t>(n));
    row.bias_offsets.resize(static_cast<size_t>(blocks));
    cpu::quantize_q8_0_blocks(x, blocks, row.q.data(), row.scales.data(), row.biased.data(), row.bias_offsets.data());
    return;
  }
  row.sums16.resize(static_cast<size_t>(n / 16));
  cpu::quantize_q8_k_blocks(x, blocks, row.q.data(), row.scales.data(), row.sums16.data());
  row.sub_sum_pairs.resize(static_cast<size_t>(4 * blocks));
  pair_sub_block_sums(row.sums16.data(), blocks, row.sub_sum_pairs.data());
}

int64_t activation_block(DType weight_dtype) {
  switch (weight_dtype) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q5_0: return 32;
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return 256;
    case DType::F32:
    case DType::F16:
    case DType::BF16: return 0;
  }
  return 0;
}

void round_activations(DType weight_dtype, const float* x, int64_t rows, int64_t cols, float* out) {
  const int64_t block = activation_block(weight_dtype);
  if (block == 0) {
    if (out != x) std::copy_n(x, rows * cols, out);
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; c += block) {
      const int64_t n = std::min(block, cols - c);
      if (block == 32)
        round_q8_0(x + r * cols + c, n, out + r * cols + c);
      else
        round_q8_k(x + r * cols + c, n, out + r * cols + c);
    }
}

}  // namespace snapstream::kernels
