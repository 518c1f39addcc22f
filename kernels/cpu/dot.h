// Dot products of one weight row (in its storage dtype) with an f32 activation vector.
// These are the inner loops of decode, where every weight is read once per step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// Every f32 dot product of rows as stored sums the same way: one 8-lane accumulator over chunks
// of 8, a horizontal sum, then the scalar tail. The tiled kernel below follows it exactly, so a
// result never depends on which tile, batch or thread computed it. (Rows regrouped sixteen at a
// time sum each row in one chain instead, as batch-independent: cpu/float_group_dots.h.)
float dot_f32(const float* w, const float* x, int64_t n);
float dot_f16(const uint16_t* w, const float* x, int64_t n);
float dot_bf16(const uint16_t* w, const float* x, int64_t n);
// One f16 or bf16 row (`dtype`) against up to 4 activation rows: out[j * out_stride] =
// dot_f16/dot_bf16(w, x[j], n), bit for bit, each chunk of the row widened once for all of them.
void dot_16bit_tile(DType dtype, const uint16_t* w, const float* const* x, int m, int64_t n, float* out, int64_t out_stride);

// Reads a row of f32, f16 or bf16 directly; block-quantised rows go through the integer dot
// products or are decoded a row at a time first (see matmul and has_fused_dot below).
float dot_row(DType dtype, const std::byte* row, const float* x, int64_t n);

// A tile of up to 4 weight rows (w_rows, `rows` of them, `stride` floats apart) against up to 4
// activation rows: out[j * out_stride + r] = dot_f32(w row r, x[j], n), bit for bit. Each weight
// and activation chunk is loaded once for the whole tile, which keeps batched decode compute-light.
// `next`, when not null, is the next tile's first weight row: it is prefetched into L2 meanwhile,
// because the hardware prefetcher loses track of several interleaved row streams.
void dot_f32_tile(const float* w, int64_t stride, int rows, const float* const* x, int m, int64_t n, float* out,
                  int64_t out_stride, const float* next);

// Eight rows (`stride` floats apart) against one vector: out[s] = dot_f32(row s, x, n), bit for
// bit. The eight horizontal sums run side by side as shuffles across the rows, which is what
// makes short rows (attention heads of 8 to 64 values) cheap to score.
void dot_f32_rows8(const float* rows, int64_t stride, const float* x, int64_t n, float* out);
// The same for rows of f16 values (`stride` values apart), summed as dot_f32 sums the widened rows.
void dot_f16_rows8(const uint16_t* rows, int64_t stride, const float* x, int64_t n, float* out);

// A Q8_0 cache row of n values (n a multiple of 32: blocks of an f16 scale and 32 int8 values)
// against one vector: each block's products summed (with AVX2 in one 8-lane chain), times its
// scale, added to the total (with AVX2 an 8-lane one, then a horizontal sum). dot_q8_0_rows8
// sums eight rows (`row_bytes` apart) the same way, out[s] = dot_q8_0(row s, x, n) bit for bit.
// The 8-bit values are read where they lie: widening each head's rows into an f32 buffer first
// made llama-110m's decode attention at 16 sequences twice as slow as over f16 rows.
float dot_q8_0(const std::byte* row, const float* x, int64_t n);
void dot_q8_0_rows8(const std::byte* rows, int64_t row_bytes, const float* x, int64_t n, float* out);

SNAPSTREAM_FLOAT_ISA_END

// Whether dot_row reads this dtype directly (f32, f16, bf16). It does not depend on the
// instruction set, so it is defined once, outside the copies.
bool has_fused_dot(DType dtype);

}  // namespace snapstream::kernels::cpu
