// The float kernels (dot products, weighted sums, score scaling, exp, the head-8 attention loops,
// f16 row conversions, activation rows rounded for the integer products, prefill's GEMM and
// attention products) are built once per instruction set and chosen at run time from the CPU's
// features, as the integer dot products are: a build for a baseline CPU (the portable Docker
// image) still runs them at the speed of the CPU it finds. The functions in dot.h,
// weighted_sum.h, score_row.h, exp_row.h, head8.h, f16_rows.h, activation_blocks.h and
// gemm_f32.h forward to the chosen copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"

namespace snapstream::kernels::cpu {

// One copy's entry points; each member behaves as the function of the same name documents. The
// head-8 members are null where the copy's instruction set lacks them.
struct FloatKernels {
  const char* isa;
  float (*dot_f32)(const float*, const float*, int64_t);
  float (*dot_f16)(const uint16_t*, const float*, int64_t);
  float (*dot_bf16)(const uint16_t*, const float*, int64_t);
  void (*dot_16bit_tile)(DType, const uint16_t*, const float* const*, int, int64_t, float*, int64_t);
  float (*dot_row)(DType, const std::byte*, const float*, int64_t);
  void (*dot_f32_tile)(const float*, int64_t, int, const float* const*, int, int64_t, float*, int64_t, const float*);
  void (*dot_f32_rows8)(const float*, int64_t, const float*, int64_t, float*);
  void (*dot_f16_rows8)(const uint16_t*, int64_t, const float*, int64_t, float*);
  float (*dot_q8_0)(const std::byte*, const float*, int64_t);
  void (*dot_q8_0_rows8)(const std::byte*, int64_t, const float*, int64_t, float*);
  void (*weighted_row_sums_f32)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, float*, int64_t);
  void (*weighted_row_sums_f16)(const float*, int64_t, int64_t, const uint16_t*, int64_t, int64_t, int64_t, float*,
                                int64_t);
  void (*weighted_q8_0_row_sums)(const float*, int64_t, int64_t, const std::byte*, int64_t, int64_t, int64_t, float*,
                                 int64_t);
  float (*scale_live_scores)(float*, const uint8_t*, int64_t, float, float);
  float (*exp_shifted_row)(float*, int64_t, float);
  void (*exp_row)(const float*, float, float*, int64_t);
  void (*score_keys_head8_f32)(const float*, int64_t, const float*, int64_t, float*, int64_t);
  void (*score_keys_head8_f16)(const float*, int64_t, const uint16_t*, int64_t, float*, int64_t);
  void (*weighted_rows_head8_f32)(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t);
  void (*weighted_rows_head8_f16)(const float*, int64_t, int64_t, const uint16_t*, int64_t, float*, int64_t);
  void (*widen_f16_row)(const std::byte*, int64_t, float*);
  void (*narrow_f16_row)(const float*, int64_t, std::byte*);
  void (*narrow_q8_0_blocks)(const float*, int64_t, std::byte*);
  void (*widen_q8_0_blocks)(const std::byte*, int64_t, float*);
  void (*quantize_q8_k_blocks)(const float*, int64_t, int8_t*, float*, int16_t*);
  void (*quantize_q8_0_blocks)(const float*, int64_t, int8_t*, float*, uint8_t*, int32_t*);
  void (*gemm_f32)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t);
  void (*attention_scores_f32)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, float, float*);
  void (*attention_values_f32)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t);
};

// The copy this process runs (the widest the CPU supports, chosen once), and every copy the CPU
// runs, narrowest first. Tests run each against the naive references.
const FloatKernels& float_kernels();
std::vector<const FloatKernels*> runnable_float_kernels();

}  // namespace snapstream::kernels::cpu
