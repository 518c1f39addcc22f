// Weighted row sums, one pass over the rows per 64 output columns (fewer when several heads
// share the pass) so the partial sums stay in registers instead of going through memory once per row.
#include "kernels/cpu/weighted_sum.h"

#include <algorithm>

#include "kernels/cpu/widen.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN
namespace {

#ifdef SNAPSTREAM_AVX2

// Rows of one or two chunks leave too few independent FMA chains to hide their latency, so
// their rows are dealt round-robin to several sets of accumulators, added pairwise at the end.
// The split depends on the width only, never on how many heads share the pass.
constexpr int chain_sets(int chunks) { return chunks == 1 ? 4 : chunks == 2 ? 2 : 1; }

// Heads side by side: Sets x Heads x Chunks accumulators, a row skipped only when every head's
// weight for it is zero.
template <typename T, int Chunks, int Heads>
void head_columns(const float* weights, int64_t weights_stride, const T* rows, int64_t count, int64_t stride, float* out,
                  int64_t out_stride) {
  constexpr int Sets = chain_sets(Chunks);
  __m256 acc[Sets][Heads][Chunks];
  for (auto& set : acc)
    for (auto& head : set)
      for (auto& a : head) a = _mm256_setzero_ps();
  auto add_row = [&](int64_t s, __m256(&sums)[Heads][Chunks]) {
    bool any = false;
    for (int h = 0; h < Heads; ++h) any |= weights[h * weights_stride + s] != 0.0f;
    if (!any) return;
    const T* row = rows + s * stride;
    __m256 values[Chunks];
#pragma GCC unroll 8
    for (int c = 0; c < Chunks; ++c) values[c] = load8(row + 8 * c);
#pragma GCC unroll 8
    for (int h = 0; h < Heads; ++h) {
      const __m256 w = _mm256_set1_ps(weights[h * weights_stride + s]);
#pragma GCC unroll 8
      for (int c = 0; c < Chunks; ++c) sums[h][c] = _mm256_fmadd_ps(w, values[c], sums[h][c]);
    }
  };
  int64_t s = 0;
  for (; s + Sets <= count; s += Sets)
#pragma GCC unroll 4
    for (int j = 0; j < Sets; ++j) add_row(s + j, acc[j]);
#pragma GCC unroll 4
  for (int j = 0; j + 1 < Sets; ++j)
    if (s + j < count) add_row(s + j, acc[j]);
  for (int h = 0; h < Heads; ++h)
    for (int c = 0; c < Chunks; ++c) {
      __m256 total = acc[0][h][c];
      if constexpr (Sets == 4)
        total = _mm256_add_ps(_mm256_add_ps(acc[0][h][c], acc[2][h][c]), _mm256_add_ps(acc[1][h][c], acc[3][h][c]));
      else if constexpr (Sets == 2)
        total = _mm256_add_ps(acc[0][h][c], acc[1][h][c]);
      _mm256_storeu_ps(out + h * out_stride + 8 * c, total);
    }
}

// At most eight accumulators per pass, whatever the split between sets, heads and chunks.
constexpr int kMaxAccumulators = 8;

template <typename T, int Chunks, int Heads = std::max(1, kMaxAccumulators / (Chunks * chain_sets(Chunks)))>
void head_columns_of(int64_t heads, const float* weights, int64_t weights_stride, const T* rows, int64_t count,
                     int64_t stride, float* out, int64_t out_stride) {
  if constexpr (Heads > 1) {
    if (heads < Heads)
      return head_columns_of<T, Chunks, Heads - 1>(heads, weights, weights_stride, rows, count, stride, out, out_stride);
  }
  head_columns<T, Chunks, Heads>(weights, weights_stride, rows, count, stride, out, out_stride);
}

template <typename T>
using HeadColumnPass = void (*)(int64_t, const float*, int64_t, const T*, int64_t, int64_t, float*, int64_t);
template <typename T>
constexpr HeadColumnPass<T> kHeadPasses[] = {nullptr,
                                             head_columns_of<T, 1>,
                                             head_columns_of<T, 2>,
                                             head_columns_of<T, 3>,
                                             head_columns_of<T, 4>,
                                             head_columns_of<T, 5>,
                                             head_columns_of<T, 6>,
                                             head_columns_of<T, 7>,
                                             head_columns_of<T, 8>};

constexpr int64_t kMaxChunks = 8;
#endif

template <typename T>
void head_sums(const float* weights, int64_t weights_stride, int64_t heads, const T* rows, int64_t count, int64_t stride,
               int64_t width, float* out, int64_t out_stride) {
  if (count == 0) {
    // No rows (an empty cache may hand over no storage at all, so no arithmetic on `rows`).
    for (int64_t h = 0; h < heads; ++h) std::fill_n(out + h * out_stride, width, 0.0f);
    return;
  }
  int64_t d = 0;
#ifdef SNAPSTREAM_AVX2
  for (; d + 8 <= width;) {
    const int64_t chunks = std::min<int64_t>(kMaxChunks, (width - d) / 8);
    const int64_t per_pass = std::max<int64_t>(1, kMaxAccumulators / (chunks * chain_sets(static_cast<int>(chunks))));
    for (int64_t h = 0; h < heads; h += per_pass)
      kHeadPasses<T>[chunks](std::min(per_pass, heads - h), weights + h * weights_stride, weights_stride, rows + d, count,
                             stride, out + h * out_stride + d, out_stride);
    d += 8 * chunks;
  }
#endif
  // The columns past the last whole chunk, one at a time.
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t c = d; c < width; ++c) {
      const float* w = weights + h * weights_stride;
      float sum = 0.0f;
      for (int64_t s = 0; s < count; ++s)
        if (w[s] != 0.0f) sum += w[s] * widen(rows[s * stride + c]);
      out[h * out_stride + c] = sum;
    }
}
}  // namespace

namespace {
#ifdef SNAPSTREAM_AVX2
#ifdef __AVX512F__
// The avx512 copy widens sixteen values an instruction (as dot_q8_0_rows8 does, and for the same
// reason).
using Q8Lanes = __m512;
constexpr int kQ8LaneWidth = 16;
inline Q8Lanes q8_lanes_zero() { return _mm512_setzero_ps(); }
inline Q8Lanes q8_lanes_load(const std::byte* q) { return load16_int8(q); }
inline Q8Lanes q8_lanes_fmadd(float w, Q8Lanes v, Q8Lanes acc) { return _mm512_fmadd_ps(_mm512_set1_ps(w), v, acc); }
inline void q8_lanes_store(float* out, Q8Lanes v) { _mm512_storeu_ps(out, v); }
#else
using Q8Lanes = __m256;
constexpr int kQ8LaneWidth = 8;
inline Q8Lanes q8_lanes_zero() { return _mm256_setzero_ps(); }
inline Q8Lanes q8_lanes_load(const std::byte* q) { return load8_int8(q); }
inline Q8Lanes q8_lanes_fmadd(float w, Q8Lanes v, Q8Lanes acc) { return _mm256_fmadd_ps(_mm256_set1_ps(w), v, acc); }
inline void q8_lanes_store(float* out, Q8Lanes v) { _mm256_storeu_ps(out, v); }
#endif

// Blocks whole blocks of columns for Heads heads side by side (at most 64 columns of
// accumulators, as head_columns keeps), a row skipped when every head's weight for it is zero.
template <int Blocks, int Heads>
void q8_head_columns(const float* weights, int64_t weights_stride, const std::byte* rows, int64_t count, int64_t row_bytes,
                     float* out, int64_t out_stride) {
  constexpr int kChunksPerBlock = kQ8Values / kQ8LaneWidth;
  constexpr int Chunks = kChunksPerBlock * Blocks;
  Q8Lanes acc[Heads][Chunks];
  for (auto& head : acc)
    for (auto& a : head) a = q8_lanes_zero();
  for (int64_t s = 0; s < count; ++s) {
    bool any = false;
    for (int h = 0; h < Heads; ++h) any |= weights[h * weights_stride + s] != 0.0f;
    if (!any) continue;
    const std::byte* row = rows + s * row_bytes;
    Q8Lanes values[Chunks];
    float scales[Blocks];
#pragma GCC unroll 2
    for (int b = 0; b < Blocks; ++b) {
      scales[b] = q8_scale(row + b * kQ8Bytes);
#pragma GCC unroll 4
      for (int c = 0; c < kChunksPerBlock; ++c)
        values[kChunksPerBlock * b + c] = q8_lanes_load(row + b * kQ8Bytes + 2 + kQ8LaneWidth * c);
    }
#pragma GCC unroll 2
    for (int h = 0; h < Heads; ++h)
#pragma GCC unroll 2
      for (int b = 0; b < Blocks; ++b) {
        const float w = weights[h * weights_stride + s] * scales[b];
#pragma GCC unroll 4
        for (int c = 0; c < kChunksPerBlock; ++c) {
          const int at = kChunksPerBlock * b + c;
          acc[h][at] = q8_lanes_fmadd(w, values[at], acc[h][at]);
        }
      }
  }
  for (int h = 0; h < Heads; ++h)
    for (int c = 0; c < Chunks; ++c) q8_lanes_store(out + h * out_stride + kQ8LaneWidth * c, acc[h][c]);
}
#endif
}  // namespace

void weighted_q8_0_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const std::byte* rows,
                            int64_t count, int64_t row_bytes, int64_t width, float* out, int64_t out_stride) {
  if (count == 0) {
    for (int64_t h = 0; h < heads; ++h) std::fill_n(out + h * out_stride, width, 0.0f);
    return;
  }
  const int64_t blocks = width / kQ8Values;
#ifdef SNAPSTREAM_AVX2
  // Two blocks (64 columns) a pass for one head at a time, or one block for two heads.
  for (int64_t b = 0; b < blocks;) {
    const std::byte* block_rows = rows + b * kQ8Bytes;
    float* block_out = out + b * kQ8Values;
    if (b + 2 <= blocks) {
      for (int64_t h = 0; h < heads; ++h)
        q8_head_columns<2, 1>(weights + h * weights_stride, weights_stride, block_rows, count, row_bytes,
                              block_out + h * out_stride, out_stride);
      b += 2;
      continue;
    }
    int64_t h = 0;
    for (; h + 2 <= heads; h += 2)
      q8_head_columns<1, 2>(weights + h * weights_stride, weights_stride, block_rows, count, row_bytes,
                            block_out + h * out_stride, out_stride);
    if (h < heads)
      q8_head_columns<1, 1>(weights + h * weights_stride, weights_stride, block_rows, count, row_bytes,
                            block_out + h * out_stride, out_stride);
    b += 1;
  }
#else
  for (int64_t h = 0; h < heads; ++h) {
    const float* w = weights + h * weights_stride;
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t i = 0; i < kQ8Values; ++i) {
        float sum = 0.0f;
        for (int64_t s = 0; s < count; ++s) {
          const std::byte* block = rows + s * row_bytes + b * kQ8Bytes;
          if (w[s] != 0.0f) sum += w[s] * q8_scale(block) * q8_value(block, i);
        }
        out[h * out_stride + b * kQ8Values + i] = sum;
      }
  }
#endif
}

void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const float* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride) {
  head_sums(weights, weights_stride, heads, rows, count, stride, width, out, out_stride);
}

void weighted_row_sums(const float* weights, int64_t weights_stride, int64_t heads, const uint16_t* rows, int64_t count,
                       int64_t stride, int64_t width, float* out, int64_t out_stride) {
  head_sums(weights, weights_stride, heads, rows, count, stride, width, out, out_stride);
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
