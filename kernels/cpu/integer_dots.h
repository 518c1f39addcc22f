// Integer dot products of block-quantised weight rows with activation rows quantised to 8 bits
// (Q8_0 grid for Q8_0/Q4_0/Q5_0 weights, Q8_K for the K-quants), a band of weight rows against
// several activation rows so a weight block is read and unpacked once for all of them. One portable
// implementation and x86 ones, chosen at run time from what the CPU has; every variant gives
// the same bits, so the choice, the batch and the band never change a result.
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
  const int16_t* sums16;        // Q8_K grid only
  const uint8_t* biased;        // Q8_0 grid only: q + 128
  const int32_t* bias_offsets;  // Q8_0 grid only: -128 times each block's sum of q
  const int32_t* sub_sum_pairs; // Q8_K grid only: sub-block sums paired as the Q4_K mins are
};

// y[i * y_stride + r] = (weight row r) · x[i] for r < rows and i < m. The weight rows lie
// row_stride bytes apart and hold `blocks` whole blocks each. A result depends only on its weight
// row and activation row, never on the other rows of the call.
using IntegerBandDots = void (*)(const std::byte* w, int64_t row_stride, int64_t rows, int64_t blocks,
                                 const QuantisedRowView* x, int64_t m, float* y, int64_t y_stride);

// The same products for weights regrouped sixteen rows at a time (kernels/row_groups.h):
// `groups` groups of `blocks` blocks each, w the first group's start; y[i * y_stride + r] for
// row r of the groups taken in order. The bits are those of the band kernels on the rows.
using IntegerGroupDots = void (*)(const std::byte* w, int64_t groups, int64_t blocks, const QuantisedRowView* x, int64_t m,
                                  float* y, int64_t y_stride);

struct IntegerDotKernels {
  const char* isa;
  IntegerBandDots q8_0, q4_0, q5_0, q4_k, q5_k, q6_k;
  IntegerGroupDots q4_k_groups, q8_0_groups;  // null where the variant reads no row groups
};

// Whether integer_band_dots has a kernel for this weight dtype.
bool has_integer_dot(DType dtype);
// The kernel for `dtype` from `kernels`.
IntegerBandDots integer_band_dots(const IntegerDotKernels& kernels, DType dtype);
// The row-group kernel for `dtype` from `kernels`, or null where it has none.
IntegerGroupDots integer_group_dots(const IntegerDotKernels& kernels, DType dtype);

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
