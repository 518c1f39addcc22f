// Integer dot products of block-quantised weight rows with activation rows quantised to 8 bits
// (Q8_0 grid for Q8_0/Q4_0/Q5_0 weights, Q8_K for the K-quants), several activation rows per
// weight row so a weight block is read and unpacked once for all of them. One portable
// implementation and x86 ones, chosen at run time from what the CPU has; every variant gives
// the same bits, so the choice, the batch and the tile never change a result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"

namespace snapstream::kernels::cpu {

// One quantised activation row as the kernels read it (see QuantisedRow in activation_rounding.h).
struct QuantisedRowView {
  const int8_t* q;
  const float* scales;
  const int16_t* sums16;  // Q8_K grid only
  const uint8_t* biased;  // Q8_0 grid only: q + 128
  const float* paired_scales;  // Q8_0 grid only: see QuantisedRow
};

// Activation rows one call takes at most.
inline constexpr int kIntegerTileRows = 8;

// out[j * out_stride] = w · x[j] for j < m <= kIntegerTileRows; w holds `blocks` whole blocks.
using IntegerRowDots = void (*)(const std::byte* w, int64_t blocks, const QuantisedRowView* x, int m, float* out,
                                int64_t out_stride);

struct IntegerDotKernels {
  const char* isa;
  IntegerRowDots q8_0, q4_0, q5_0, q4_k, q5_k, q6_k;
};

// Whether integer_row_dots has a kernel for this weight dtype.
bool has_integer_dot(DType dtype);
// The kernel for `dtype` from `kernels`.
IntegerRowDots integer_row_dots(const IntegerDotKernels& kernels, DType dtype);

// The fastest variant this CPU runs (chosen once), and every variant it runs, portable first.
const IntegerDotKernels& integer_dot_kernels();
std::vector<const IntegerDotKernels*> runnable_integer_dot_kernels();

// The variants; only call one that runnable_integer_dot_kernels() lists.
extern const IntegerDotKernels kPortableIntegerDots;
#if defined(__x86_64__)
extern const IntegerDotKernels kAvx2IntegerDots;
extern const IntegerDotKernels kAvxVnniIntegerDots;
extern const IntegerDotKernels kAvx512VnniIntegerDots;
#endif

}  // namespace snapstream::kernels::cpu
