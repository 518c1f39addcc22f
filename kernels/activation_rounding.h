// The 8-bit grids that activations are rounded to before a product with block-quantised
// weights. llama.cpp's CPU backend multiplies Q8_0, Q4_0 and Q5_0 weights with activations
// quantised to Q8_0 (blocks of 32, f16 scale) and K-quant weights with activations in Q8_K
// (blocks of 256, f32 scale); rounding ours the same way makes our logits those of the files'
// reference implementation rather than of an exact product, which random-weight models tell apart.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/dtype.h"

namespace snapstream::kernels {

// Activation values per rounding block for weights of `weight_dtype`; 0 when activations stay
// exact (the float types).
int64_t activation_block(DType weight_dtype);

// out = x rounded to the grid of activation_block(weight_dtype), row by row; blocks start at
// each row's first column and the last may be shorter. out may be x.
void round_activations(DType weight_dtype, const float* x, int64_t rows, int64_t cols, float* out);

// One Q8_K block of n <= 256 values as integers: x ≈ scale · q, the value of largest magnitude
// at -127. round_activations' K-quant grid is exactly scale · q.
void quantize_q8_k_block(const float* x, int64_t n, int8_t* q, float& scale);
// One Q8_0 block of n <= 32 values: q = x · 127 / amax rounded to nearest even, and the scale
// amax / 127 as its f16 rounding (what the block stores). round_activations' Q8_0 grid is scale · q.
// A NaN value gives 0, as does every value of a block holding an infinity.
void quantize_q8_0_block(const float* x, int64_t n, int8_t* q, float& scale);

// An activation row on its grid as integers, for the integer dot products: value i is
// scales[i / block] · q[i]. On the Q8_K grid, sums16[j] is the sum of q[16j .. 16j+15]; on the
// Q8_0 grid (values in [-127, 127]) biased[i] is q[i] + 128, the unsigned operand VNNI takes,
// and bias_offsets[b] is -128 times the sum of block b's q: what kernels that add 128 to the
// weights instead (to make them the unsigned operand) take back. On the Q8_K grid,
// sub_sum_pairs[4b + k] pairs block b's sums of 32-value sub-blocks (0, 2), (1, 3), (4, 6) and
// (5, 7) for k = 0..3 as the low and high halves of one word (each sum's magnitude is below 2^15),
// the order in which the Q4_K row-group kernel pairs the sub-blocks' mins.
struct QuantisedRow {
  int64_t block = 0;
  std::vector<int8_t> q;
  std::vector<float> scales;
  std::vector<int16_t> sums16;
  std::vector<uint8_t> biased;
  std::vector<int32_t> bias_offsets;
  std::vector<int32_t> sub_sum_pairs;
};
// x has n values, whole blocks of activation_block(weight_dtype) (which must not be 0).
void quantise_activation_row(DType weight_dtype, const float* x, int64_t n, QuantisedRow& row);

}  // namespace snapstream::kernels
