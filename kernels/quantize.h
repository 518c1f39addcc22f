// Encoding of f32 rows into a storage dtype (the inverse of dequantize_row).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::kernels {

// Writes row_bytes(dtype, cols) bytes. Q8_0 uses one scale per 32 values: max|x| / 127.
void quantize_row(DType dtype, const float* values, int64_t cols, std::byte* out);

}  // namespace snapstream::kernels
