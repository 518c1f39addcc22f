// Chooses the copy of the float kernels the CPU runs, once, and forwards every entry point to it.
#include "kernels/cpu/float_kernels.h"

#include "kernels/cpu/activation_blocks.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dot.h"
#include "kernels/cpu/exp_row.h"
#include "kernels/cpu/f16_rows.h"
#include "kernels/cpu/gemm_f32.h"
#include "kernels/cpu/head8.h"
#include "kernels/cpu/score_row.h"
#include "kernels/cpu/weighted_sum.h"

namespace snapstream::kernels::cpu {

#if defined(__x86_64__)
namespace x86_64 {
extern const FloatKernels kFloatKernels;
}
namespace avx2 {
extern const FloatKernels kFloatKernels;
}
namespace avx512 {
extern const FloatKernels kFloatKernels;
}
#else
namespace build {
extern const FloatKernels kFloatKernels;
}
#endif

std::vector<const FloatKernels*> runnable_float_kernels() {
#if defined(__x86_64__)
  std::vector<const FloatKernels*> copies{&x86_64::kFloatKernels};
  const CpuFeatures features = running_cpu_features();
  if (runs_x86_64_v3(features)) copies.push_back(&avx2::kFloatKernels);
  if (runs_x86_64_v4(features)) copies.push_back(&avx512::kFloatKernels);
  return copies;
#else
  return {&build::kFloatKernels};
#endif
}

const FloatKernels& float_kernels() {
  static const FloatKernels* const chosen = runnable_float_kernels().back();
  return *chosen;
}

float dot_f32(const float* w, const float* x, int64_t n) { return float_kernels().dot_f32(w, x, n); }
float dot_f16(const uint16_t* w, const float* x, int64_t n) { return float_kernels().dot_f16(w, x, n); }
float dot_bf16(const uint16_t* w, const float* x, int64_t n) { return float_kernels().dot_bf16(w, x, n); }
void dot_16bit_tile(DType dtype, const uint16_t* w, const float* const* x, int m, int64_t n, float* out, int64_t out_stride) {
  float_kernels().dot_16bit_tile(dtype, w, x, m, n, out, out_stride);
}
bool has_fused_dot(DType dtype) { return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16; }
float dot_row(DType dtype, const std::byte* row, const float* x, int64_t n) {
  return float_kernels().dot_row(dtype, row, x, n);
}
void dot_f32_tile(const float* w, int64_t stride, int rows, const float* const* x, int m, int64_t n, float* out,
                  int64_t out_stride, const float* next) {
  float_kernels().dot_f32_tile(w, stride, rows, x, m, n, out, out_stride, next);
}
void dot_f32_rows8(const float* rows, int64_t stride, const float* x, int64_t n, float* out) {
  float_kernels().dot_f32_rows8(rows, stride, x, n, out);
}
void dot_f16_rows8(const uint16_t* rows, int64_t stride, const float* x, int64_t n, float* out) {
  float_kernels().dot_f16_rows8(rows, stride, x, n, out);
}
float dot_q8_0(const std::byte* row, const float* x, int64_t n) { return float_kernels().dot_q8_0(row, x, n); }
void dot_q8_0_rows8(const std::byte* rows, int64_t row_bytes, const float* x, int64_t n, float* out) {
  float_kernels().dot_q8_0_rows8(rows, row_bytes, x, n, out);
}
void weighted_q8_0_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const std::byte* rows,
                            int64_t count, int64_t row_bytes, int64_t width, float* out, int64_t out_stride) {
  float_kernels().weighted_q8_0_row_sums(weights, weights_stride, heads, rows, count, row_bytes, width, out, out_stride);
}

void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const float* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride) {
  float_kernels().weighted_row_sums_f32(weights, weights_stride, heads, rows, count, stride, width, out, out_stride);
}
void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const uint16_t* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride) {
  float_kernels().weighted_row_sums_f16(weights, weights_stride, heads, rows, count, stride, width, out, out_stride);
}

float scale_live_scores(float* scores, const uint8_t* live, int64_t n, float scale, float start) {
  return float_kernels().scale_live_scores(scores, live, n, scale, start);
}
float exp_shifted_row(float* x, int64_t n, float shift) { return float_kernels().exp_shifted_row(x, n, shift); }
void exp_row(const float* in, float factor, float* out, int64_t n) { float_kernels().exp_row(in, factor, out, n); }

bool head8_scores_available() { return float_kernels().score_keys_head8_f32 != nullptr; }
bool head8_weighted_rows_available() { return float_kernels().weighted_rows_head8_f32 != nullptr; }
// Callers ask head8_*_available() first; a copy without the kernels leaves these null.
void score_keys_head8(const float* q, int64_t heads, const float* keys, int64_t count, float* scores,
                      int64_t scores_stride) {
  float_kernels().score_keys_head8_f32(q, heads, keys, count, scores, scores_stride);
}
void score_keys_head8(const float* q, int64_t heads, const uint16_t* keys, int64_t count, float* scores,
                      int64_t scores_stride) {
  float_kernels().score_keys_head8_f16(q, heads, keys, count, scores, scores_stride);
}
void weighted_rows_head8(const float* weights, int64_t weights_stride, int64_t heads, const float* rows, int64_t count,
                         float* out, int64_t out_stride) {
  float_kernels().weighted_rows_head8_f32(weights, weights_stride, heads, rows, count, out, out_stride);
}
void weighted_rows_head8(const float* weights, int64_t weights_stride, int64_t heads, const uint16_t* rows,
                         int64_t count, float* out, int64_t out_stride) {
  float_kernels().weighted_rows_head8_f16(weights, weights_stride, heads, rows, count, out, out_stride);
}

void widen_f16_row(const std::byte* f16, int64_t n, float* out) { float_kernels().widen_f16_row(f16, n, out); }
void narrow_f16_row(const float* values, int64_t n, std::byte* f16) { float_kernels().narrow_f16_row(values, n, f16); }
void narrow_q8_0_blocks(const float* values, int64_t blocks, std::byte* q8_0) {
  float_kernels().narrow_q8_0_blocks(values, blocks, q8_0);
}
void widen_q8_0_blocks(const std::byte* q8_0, int64_t blocks, float* out) {
  float_kernels().widen_q8_0_blocks(q8_0, blocks, out);
}
void quantize_q8_k_blocks(const float* x, int64_t blocks, int8_t* q, float* scales, int16_t* sums16) {
  float_kernels().quantize_q8_k_blocks(x, blocks, q, scales, sums16);
}
void quantize_q8_0_blocks(const float* x, int64_t blocks, int8_t* q, float* scales, uint8_t* biased,
                          int32_t* bias_offsets) {
  float_kernels().quantize_q8_0_blocks(x, blocks, q, scales, biased, bias_offsets);
}

void gemm_f32(const float* x, int64_t m, const float* w, int64_t rows, int64_t cols, float* y, int64_t ldy) {
  float_kernels().gemm_f32(x, m, w, rows, cols, y, ldy);
}
void attention_scores_f32(const float* q, int64_t q_stride, int64_t rows, const float* keys, int64_t kv_stride,
                          int64_t seen, int64_t head_dim, float scale, float* scores) {
  float_kernels().attention_scores_f32(q, q_stride, rows, keys, kv_stride, seen, head_dim, scale, scores);
}
void attention_values_f32(const float* scores, int64_t rows, int64_t seen, const float* values, int64_t kv_stride,
                          int64_t head_dim, float* out, int64_t out_stride) {
  float_kernels().attention_values_f32(scores, rows, seen, values, kv_stride, head_dim, out, out_stride);
}

}  // namespace snapstream::kernels::cpu
