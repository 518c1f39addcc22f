// The integer dot products of Q4_K and Q8_0 rows regrouped sixteen at a time
// (kernels/row_groups.h), for CPUs with AVX-512 VNNI; built with those instructions and only
// called where the CPU has them.
#pragma once

#include "kernels/cpu/integer_dots.h"

namespace snapstream::kernels::cpu {

#if defined(__x86_64__)
void q4_k_group_dots_avx512(const std::byte* w, int64_t groups, int64_t blocks, const QuantisedRowView* x, int64_t m,
                            float* y, int64_t y_stride);
void q8_0_group_dots_avx512(const std::byte* w, int64_t groups, int64_t blocks, const QuantisedRowView* x, int64_t m,
                            float* y, int64_t y_stride);
#endif

}  // namespace snapstream::kernels::cpu
