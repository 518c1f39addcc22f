// Weighted row sums, one pass over the rows per 64 output columns so the partial sums stay in
// registers instead of going through memory once per row.
#include "kernels/cpu/weighted_sum.h"

#include <algorithm>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace snapstream::kernels::cpu {
namespace {

#if defined(__AVX2__) && defined(__FMA__)
template <int Chunks>
void columns(const float* weights, const float* rows, int64_t count, int64_t stride, float* out) {
  __m256 acc[Chunks];
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (int64_t s = 0; s < count; ++s) {
    if (weights[s] == 0.0f) continue;
    const __m256 w = _mm256_set1_ps(weights[s]);
    const float* row = rows + s * stride;
#pragma GCC unroll 8
    for (int c = 0; c < Chunks; ++c) acc[c] = _mm256_fmadd_ps(w, _mm256_loadu_ps(row + 8 * c), acc[c]);
  }
  for (int c = 0; c < Chunks; ++c) _mm256_storeu_ps(out + 8 * c, acc[c]);
}

using ColumnPass = void (*)(const float*, const float*, int64_t, int64_t, float*);
constexpr ColumnPass kPasses[] = {nullptr,        columns<1>, columns<2>, columns<3>, columns<4>,
                                  columns<5>, columns<6>, columns<7>, columns<8>};
constexpr int64_t kMaxChunks = 8;
#endif

}  // namespace

void weighted_row_sum(const float* weights, const float* rows, int64_t count, int64_t stride, int64_t width, float* out) {
  int64_t d = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; d + 8 <= width;) {
    const int64_t chunks = std::min<int64_t>(kMaxChunks, (width - d) / 8);
    kPasses[chunks](weights, rows + d, count, stride, out + d);
    d += 8 * chunks;
  }
#endif
  for (; d < width; ++d) {
    float sum = 0.0f;
    for (int64_t s = 0; s < count; ++s)
      if (weights[s] != 0.0f) sum += weights[s] * rows[s * stride + d];
    out[d] = sum;
  }
}

}  // namespace snapstream::kernels::cpu
