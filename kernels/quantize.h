// Encoding of f32 rows into a storage dtype (the inverse of dequantize_row).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::kernels {

// Writes row_bytes(dtype, cols) bytes; block types need whole blocks. Q8_0 uses one scale per
// 32 values, max|x| / 127; the other block types are described in quant_blocks.h.
void quantize_row(DType dtype, const float* values, int64_t cols, std::byte* out);

}  // namespace snapstream::kernels
