// Prefill's f32 matrix products on Eigen's blocked kernels, one copy per instruction set
// (cpu/float_isa.h): the GEMM of activation rows with a band of weight rows, and causal
// attention's two products per block of queries.
#pragma once

#include <cstdint>

#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// y[i * ldy + r] = sum_k x[i * cols + k] * w[r * cols + k] for i < m and r < rows.
void gemm_f32(const float* x, int64_t m, const float* w, int64_t rows, int64_t cols, float* y, int64_t ldy);

// scores[i * seen + j] = scale * sum_d q[i * q_stride + d] * keys[j * kv_stride + d], for i < rows,
// j < seen and d < head_dim: one head's queries against every key they may see.
void attention_scores_f32(const float* q, int64_t q_stride, int64_t rows, const float* keys, int64_t kv_stride,
                          int64_t seen, int64_t head_dim, float scale, float* scores);

// out[i * out_stride + d] = sum_j scores[i * seen + j] * values[j * kv_stride + d]: the
// softmaxed scores applied to one head's values.
void attention_values_f32(const float* scores, int64_t rows, int64_t seen, const float* values, int64_t kv_stride,
                          int64_t head_dim, float* out, int64_t out_stride);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
