// Decode attention's inner loops for heads of eight values: the scores on AVX2 (eight keys per
// register) and AVX-512 (sixteen), the weighted sums on AVX-512 (four value rows per register).
// A head this small leaves the generic loops (one key per 8-lane register, then a horizontal sum
// per key) mostly shuffling; here a block of keys is transposed once for all the query heads that
// share it, and every lane then carries a key.
#pragma once

#include <cstdint>

#include "kernels/cpu/float_isa.h"

// In a copy of the kernels, whether that copy's instruction set has them; elsewhere the entry
// points are always declared, and head8_scores_available() and head8_weighted_rows_available()
// say whether the copy chosen at run time has them.
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__F16C__)
#define SNAPSTREAM_HEAD8 1
#endif
#if defined(SNAPSTREAM_HEAD8) || (defined(__AVX2__) && defined(__FMA__) && defined(__F16C__))
#define SNAPSTREAM_HEAD8_SCORES 1
#endif
#ifndef SNAPSTREAM_FLOAT_ISA
#undef SNAPSTREAM_HEAD8
#undef SNAPSTREAM_HEAD8_SCORES
#define SNAPSTREAM_HEAD8_DECLARED 1
#endif

namespace snapstream::kernels::cpu {

// Values per head these kernels take.
inline constexpr int64_t kHead8Width = 8;

SNAPSTREAM_FLOAT_ISA_BEGIN

#if defined(SNAPSTREAM_HEAD8_SCORES) || defined(SNAPSTREAM_HEAD8_DECLARED)
// scores[h * scores_stride + s] = q_h · key s for h < heads and s < count, with q_h = q + 8h and
// keys eight values apart: the bits of dot_f32 (and dot_f32_rows8, dot_f16_rows8) on each key.
void score_keys_head8(const float* q, int64_t heads, const float* keys, int64_t count, float* scores,
                      int64_t scores_stride);
void score_keys_head8(const float* q, int64_t heads, const uint16_t* keys, int64_t count, float* scores,
                      int64_t scores_stride);
#endif

#if defined(SNAPSTREAM_HEAD8) || defined(SNAPSTREAM_HEAD8_DECLARED)
// out[h * out_stride + d] = Σ_s w_h[s] · rows[8s + d] for h < heads, d < 8, w_h = weights +
// h * weights_stride: row s goes to running sum s mod 4, and the sums add as (0 + 2) + (1 + 3),
// as weighted_row_sums adds rows of eight. A row a head weighs exactly zero is skipped for that
// head, so an empty entry may hold anything, even NaN; a row a head weighs must be finite.
void weighted_rows_head8(const float* weights, int64_t weights_stride, int64_t heads, const float* rows, int64_t count,
                         float* out, int64_t out_stride);
void weighted_rows_head8(const float* weights, int64_t weights_stride, int64_t heads, const uint16_t* rows,
                         int64_t count, float* out, int64_t out_stride);
#endif

SNAPSTREAM_FLOAT_ISA_END

#ifdef SNAPSTREAM_HEAD8_DECLARED
bool head8_scores_available();
bool head8_weighted_rows_available();
#endif

}  // namespace snapstream::kernels::cpu
