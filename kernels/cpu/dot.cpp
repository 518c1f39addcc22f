// SIMD dot products (AVX2+FMA+F16C in the copies built for them, portable loops otherwise).
// Several independent accumulators hide FMA latency so the loops run at memory speed.
#include "kernels/cpu/dot.h"

#include <cmath>

#include "kernels/cpu/widen.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

#ifdef SNAPSTREAM_AVX2
namespace {
inline float horizontal_sum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 0x55));
  return _mm_cvtss_f32(lo);
}
// horizontal_sum of eight accumulators at once, the same additions in the same order: first each
// one's halves (pair p holds 2p in the low half and 2p + 1 in the high one, as t = low + high),
// then t0 + t2 and t1 + t3 (quad q holds, per half, 4q and 4q + 2 or 4q + 1 and 4q + 3), last
// (t0 + t2) + (t1 + t3), which leaves 0 2 4 6 in the low half and 1 3 5 7 in the high one.
inline void horizontal_sums8(const __m256* acc, float* out) {
  __m256 pairs[4];
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p)
    pairs[p] = _mm256_add_ps(_mm256_permute2f128_ps(acc[2 * p], acc[2 * p + 1], 0x20),
                             _mm256_permute2f128_ps(acc[2 * p], acc[2 * p + 1], 0x31));
  __m256 quads[2];
#pragma GCC unroll 2
  for (int q = 0; q < 2; ++q)
    quads[q] = _mm256_add_ps(_mm256_shuffle_ps(pairs[2 * q], pairs[2 * q + 1], 0x44),
                             _mm256_shuffle_ps(pairs[2 * q], pairs[2 * q + 1], 0xEE));
  const __m256 sums = _mm256_add_ps(_mm256_shuffle_ps(quads[0], quads[1], 0x88), _mm256_shuffle_ps(quads[0], quads[1], 0xDD));
  _mm256_storeu_ps(out, _mm256_permutevar8x32_ps(sums, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}
// Left alone, GCC folds each load into every FMA that uses it, so a 4x4 tile issues 32 loads
// for 16 FMAs and runs at half speed; an empty asm makes the loaded value a register the FMAs
// share. It changes no arithmetic.
inline void keep_in_register(__m256& v) { asm("" : "+v"(v)); }
inline __m256 load_bf16x8(const uint16_t* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
}  // namespace
#endif

float dot_f32(const float* w, const float* x, int64_t n) {
  float out;
  dot_f32_tile(w, n, 1, &x, 1, n, &out, 1, nullptr);
  return out;
}

namespace {
template <int R, int M>
void tile(const float* w, int64_t stride, const float* const* x, int64_t n, float* out, int64_t out_stride,
          [[maybe_unused]] const float* next) {
  int64_t i = 0;
  float sums[M][R] = {};
#ifdef SNAPSTREAM_AVX2
  __m256 acc[M][R];
  for (auto& row : acc)
    for (auto& a : row) a = _mm256_setzero_ps();
  const float* xs[M];
  for (int j = 0; j < M; ++j) xs[j] = x[j];
  for (; i + 8 <= n; i += 8) {
    if (next != nullptr && (i & 15) == 0) {
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(next + r * stride + i), _MM_HINT_T1);
    }
    __m256 wv[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) keep_in_register(wv[r] = _mm256_loadu_ps(w + r * stride + i));
#pragma GCC unroll 4
    for (int j = 0; j < M; ++j) {
      __m256 xv = _mm256_loadu_ps(xs[j] + i);
      keep_in_register(xv);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[j][r] = _mm256_fmadd_ps(wv[r], xv, acc[j][r]);
    }
  }
  // Eight accumulators at a time where there are eight, the rest one by one. Copied out by
  // constant indices: a pointer into acc would keep all sixteen in memory for the whole loop.
  float* flat_sums = &sums[0][0];
  constexpr int kGroups = M * R / 8;
#pragma GCC unroll 2
  for (int group = 0; group < kGroups; ++group) {
    __m256 eight[8];
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) eight[q] = acc[(8 * group + q) / R][(8 * group + q) % R];
    horizontal_sums8(eight, flat_sums + 8 * group);
  }
#pragma GCC unroll 16
  for (int k = 8 * kGroups; k < M * R; ++k) flat_sums[k] = horizontal_sum(acc[k / R][k % R]);
  if constexpr (R == 4) {
    // The tail of a row whose length is no multiple of 8 (SwiGLU's hidden width often is not):
    // each sum's chain of multiply-adds runs in a lane, four rows side by side, in the scalar
    // loop's order. One at a time, sixteen short chains and their stores cost as much as the rest
    // of the tile.
    __m128 lanes[M];
    for (int j = 0; j < M; ++j) lanes[j] = _mm_loadu_ps(sums[j]);
    for (int64_t k = i; k < n; ++k) {
      const __m128 wk = _mm_setr_ps(w[k], w[stride + k], w[2 * stride + k], w[3 * stride + k]);
#pragma GCC unroll 4
      for (int j = 0; j < M; ++j) lanes[j] = _mm_fmadd_ps(wk, _mm_set1_ps(x[j][k]), lanes[j]);
    }
    for (int j = 0; j < M; ++j) _mm_storeu_ps(out + j * out_stride, lanes[j]);
    return;
  }
#endif
  // The tails use std::fma, not `sum += a * b`: whether the compiler fuses that is its choice per
  // expression (a -march=native build on an AVX512-FP16 machine fused the f32 tail and not the
  // f16 one), and f32 rows, f16 rows and single dot products must agree bit for bit.
  for (int j = 0; j < M; ++j)
    for (int r = 0; r < R; ++r) {
      float sum = sums[j][r];
      for (int64_t k = i; k < n; ++k) sum = std::fma(w[r * stride + k], x[j][k], sum);
      out[j * out_stride + r] = sum;
    }
}

template <int R>
void tile_rows(const float* w, int64_t stride, const float* const* x, int m, int64_t n, float* out, int64_t out_stride,
               const float* next) {
  switch (m) {
    case 1: return tile<R, 1>(w, stride, x, n, out, out_stride, next);
    case 2: return tile<R, 2>(w, stride, x, n, out, out_stride, next);
    case 3: return tile<R, 3>(w, stride, x, n, out, out_stride, next);
    default: return tile<R, 4>(w, stride, x, n, out, out_stride, next);
  }
}
}  // namespace

void dot_f32_tile(const float* w, int64_t stride, int rows, const float* const* x, int m, int64_t n, float* out,
                  int64_t out_stride, const float* next) {
  switch (rows) {
    case 1: return tile_rows<1>(w, stride, x, m, n, out, out_stride, next);
    case 2: return tile_rows<2>(w, stride, x, m, n, out, out_stride, next);
    case 3: return tile_rows<3>(w, stride, x, m, n, out, out_stride, next);
    default: return tile_rows<4>(w, stride, x, m, n, out, out_stride, next);
  }
}

namespace {
// Eight rows of f32 or f16 values against one f32 vector, as dot_f32 sums each.
template <typename T>
void rows8(const T* rows, int64_t stride, const float* x, int64_t n, float* out) {
  int64_t i = 0;
#ifdef SNAPSTREAM_AVX2
  // Unrolled at compile time, as horizontal_sums8's loops are: left as loops, the zeroing became
  // a call to memset and the eight sums stayed in memory, not registers (for heads of eight
  // values, 30% more instructions in this kernel).
  __m256 acc[8];
#pragma GCC unroll 8
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) acc[s] = _mm256_fmadd_ps(load8(rows + s * stride + i), xv, acc[s]);
  }
  horizontal_sums8(acc, out);
  if (i == n) return;  // short rows (attention heads of 8 or 16 values) end here
#else
  for (int s = 0; s < 8; ++s) out[s] = 0.0f;
#endif
  for (int s = 0; s < 8; ++s) {
    float sum = out[s];
    for (int64_t k = i; k < n; ++k) sum = std::fma(widen(rows[s * stride + k]), x[k], sum);
    out[s] = sum;
  }
}
}  // namespace

void dot_f32_rows8(const float* rows, int64_t stride, const float* x, int64_t n, float* out) { rows8(rows, stride, x, n, out); }
void dot_f16_rows8(const uint16_t* rows, int64_t stride, const float* x, int64_t n, float* out) { rows8(rows, stride, x, n, out); }

#ifdef SNAPSTREAM_AVX2
namespace {
// One Q8_0 block's 32 products with x (four chunks in one chain), not yet scaled.
inline __m256 q8_block_products(const std::byte* block, const __m256 (&x)[4]) {
  __m256 sum = _mm256_mul_ps(load8_int8(block + 2), x[0]);
#pragma GCC unroll 3
  for (int c = 1; c < 4; ++c) sum = _mm256_fmadd_ps(load8_int8(block + 2 + 8 * c), x[c], sum);
  return sum;
}
#ifdef __AVX512F__
// The same with sixteen lanes, x's block given as two halves.
inline __m512 q8_block_products16(const std::byte* block, __m512 x0, __m512 x1) {
  return _mm512_fmadd_ps(load16_int8(block + 18), x1, _mm512_mul_ps(load16_int8(block + 2), x0));
}
inline __m512 q8_block_products16(const std::byte* block, const float* x) {
  return q8_block_products16(block, _mm512_loadu_ps(x), _mm512_loadu_ps(x + 16));
}
// Sixteen lanes folded to eight, for the eight-lane reductions.
inline __m256 half_sum(__m512 v) { return _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)); }
#endif
inline void load_block_x(const float* x, __m256 (&out)[4]) {
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) out[c] = _mm256_loadu_ps(x + 8 * c);
}
}  // namespace
#endif

float dot_q8_0(const std::byte* row, const float* x, int64_t n) {
#ifdef __AVX512F__
  // dot_q8_0_rows8's steps for one row, so a key scores the same bits either way.
  __m512 total = _mm512_setzero_ps();
  for (int64_t b = 0; b < n / kQ8Values; ++b) {
    const std::byte* block = row + b * kQ8Bytes;
    total = _mm512_fmadd_ps(_mm512_set1_ps(q8_scale(block)), q8_block_products16(block, x + b * kQ8Values), total);
  }
  return horizontal_sum(half_sum(total));
#elif defined(SNAPSTREAM_AVX2)
  __m256 total = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQ8Values; ++b) {
    const std::byte* block = row + b * kQ8Bytes;
    __m256 xb[4];
    load_block_x(x + b * kQ8Values, xb);
    total = _mm256_fmadd_ps(_mm256_set1_ps(q8_scale(block)), q8_block_products(block, xb), total);
  }
  return horizontal_sum(total);
#else
  float total = 0.0f;
  for (int64_t b = 0; b < n / kQ8Values; ++b) {
    const std::byte* block = row + b * kQ8Bytes;
    float sum = 0.0f;
    for (int64_t i = 0; i < kQ8Values; ++i) sum = std::fma(q8_value(block, i), x[b * kQ8Values + i], sum);
    total = std::fma(q8_scale(block), sum, total);
  }
  return total;
#endif
}

void dot_q8_0_rows8(const std::byte* rows, int64_t row_bytes, const float* x, int64_t n, float* out) {
#ifdef __AVX512F__
  // Sixteen values an instruction: with eight, widening the int8 values rather than reading them
  // set the pace (a 16-sequence step read its Q8_0 cache at 10-19 GB/s, its f16 cache at 19-34).
  __m512 acc[8];
#pragma GCC unroll 8
  for (auto& a : acc) a = _mm512_setzero_ps();
  for (int64_t b = 0; b < n / kQ8Values; ++b) {
    const __m512 x0 = _mm512_loadu_ps(x + b * kQ8Values), x1 = _mm512_loadu_ps(x + b * kQ8Values + 16);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      const std::byte* block = rows + s * row_bytes + b * kQ8Bytes;
      acc[s] = _mm512_fmadd_ps(_mm512_set1_ps(q8_scale(block)), q8_block_products16(block, x0, x1), acc[s]);
    }
  }
  __m256 halves[8];
#pragma GCC unroll 8
  for (int s = 0; s < 8; ++s) halves[s] = half_sum(acc[s]);
  horizontal_sums8(halves, out);
#elif defined(SNAPSTREAM_AVX2)
  __m256 acc[8];
#pragma GCC unroll 8
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQ8Values; ++b) {
    __m256 xb[4];
    load_block_x(x + b * kQ8Values, xb);
#pragma GCC unroll 8
    for (int s = 0; s < 8; ++s) {
      const std::byte* block = rows + s * row_bytes + b * kQ8Bytes;
      acc[s] = _mm256_fmadd_ps(_mm256_set1_ps(q8_scale(block)), q8_block_products(block, xb), acc[s]);
    }
  }
  horizontal_sums8(acc, out);
#else
  for (int s = 0; s < 8; ++s) out[s] = dot_q8_0(rows + s * row_bytes, x, n);
#endif
}

namespace {
// The f16 and bf16 loops differ only in how 8 stored values widen to f32. M activation vectors
// share each widened chunk of the row; every one is summed as the single-vector loop sums it.
template <int M, typename WidenSimd, typename WidenScalar>
void dot_16bit(const uint16_t* w, const float* const* x, int64_t n, float* out, int64_t out_stride,
               [[maybe_unused]] WidenSimd widen_simd, WidenScalar widen_scalar) {
  int64_t i = 0;
  float sums[M] = {};
#ifdef SNAPSTREAM_AVX2
  __m256 a0[M], a1[M];
  for (int j = 0; j < M; ++j) a0[j] = a1[j] = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = widen_simd(w + i), w1 = widen_simd(w + i + 8);
    for (int j = 0; j < M; ++j) {
      a0[j] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[j] + i), a0[j]);
      a1[j] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[j] + i + 8), a1[j]);
    }
  }
  if (i + 8 <= n) {
    const __m256 w0 = widen_simd(w + i);
    for (int j = 0; j < M; ++j) a0[j] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[j] + i), a0[j]);
    i += 8;
  }
  for (int j = 0; j < M; ++j) sums[j] = horizontal_sum(_mm256_add_ps(a0[j], a1[j]));
#endif
  for (int j = 0; j < M; ++j) {
    float sum = sums[j];
    for (int64_t k = i; k < n; ++k) sum += widen_scalar(w[k]) * x[j][k];
    out[j * out_stride] = sum;
  }
}

#ifdef SNAPSTREAM_AVX2
constexpr __m256 (*kWidenF16)(const uint16_t*) = load8;
constexpr auto kWidenBF16 = load_bf16x8;
#else
constexpr auto kWidenF16 = nullptr;
constexpr auto kWidenBF16 = nullptr;
#endif

template <int M>
void row_tile_16bit(DType dtype, const uint16_t* w, const float* const* x, int64_t n, float* out, int64_t out_stride) {
  if (dtype == DType::F16)
    dot_16bit<M>(w, x, n, out, out_stride, kWidenF16, f16_to_f32);
  else
    dot_16bit<M>(w, x, n, out, out_stride, kWidenBF16, bf16_to_f32);
}
}  // namespace

float dot_f16(const uint16_t* w, const float* x, int64_t n) {
  float out;
  dot_16bit<1>(w, &x, n, &out, 1, kWidenF16, f16_to_f32);
  return out;
}

float dot_bf16(const uint16_t* w, const float* x, int64_t n) {
  float out;
  dot_16bit<1>(w, &x, n, &out, 1, kWidenBF16, bf16_to_f32);
  return out;
}

void dot_16bit_tile(DType dtype, const uint16_t* w, const float* const* x, int m, int64_t n, float* out, int64_t out_stride) {
  switch (m) {
    case 1: return row_tile_16bit<1>(dtype, w, x, n, out, out_stride);
    case 2: return row_tile_16bit<2>(dtype, w, x, n, out, out_stride);
    case 3: return row_tile_16bit<3>(dtype, w, x, n, out, out_stride);
    default: return row_tile_16bit<4>(dtype, w, x, n, out, out_stride);
  }
}

float dot_row(DType dtype, const std::byte* row, const float* x, int64_t n) {
  switch (dtype) {
    case DType::F32: return dot_f32(reinterpret_cast<const float*>(row), x, n);
    case DType::F16: return dot_f16(reinterpret_cast<const uint16_t*>(row), x, n);
    case DType::BF16: return dot_bf16(reinterpret_cast<const uint16_t*>(row), x, n);
    default: return 0.0f;  // has_fused_dot() is false: the caller decodes the row first
  }
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
