// Dot products of Q4_K and Q6_K weight rows with activations quantised to Q8_K integers, summed
// as integers within each 256-block as llama.cpp does: the decode loop of K-quant models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"

namespace snapstream::kernels::cpu {

// An activation row on the Q8_K grid: 256 int8 values and one f32 scale per block, with the
// sums of each 16 values (what the weights' minimums and offsets multiply).
struct Q8KRow {
  std::vector<int8_t> q;
  std::vector<float> scales;
  std::vector<int16_t> sums16;
  int64_t blocks = 0;
};

// x has n values, a multiple of 256.
void quantize_q8_k_row(const float* x, int64_t n, Q8KRow& row);

// Whether dot_k_quant reads this dtype (Q4_K, Q6_K).
bool has_k_quant_dot(DType dtype);
// One weight row of `a.blocks` whole blocks against `a`.
float dot_k_quant(DType dtype, const std::byte* w, const Q8KRow& a);

}  // namespace snapstream::kernels::cpu
