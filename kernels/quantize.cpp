// Row encoders for every weight dtype; used when writing model files.
#include <cstring>

#include "kernels/quant_blocks.h"
#include "kernels/quantize.h"

namespace snapstream::kernels {

void quantize_row(DType dtype, const float* values, int64_t cols, std::byte* out) {
  switch (dtype) {
    case DType::F32: std::memcpy(out, values, static_cast<size_t>(cols) * sizeof(float)); return;
    case DType::F16:
    case DType::BF16:
      for (int64_t i = 0; i < cols; ++i) {
        const uint16_t bits = dtype == DType::F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
        std::memcpy(out + 2 * i, &bits, 2);
      }
      return;
    default: {
      const BlockLayout block = block_layout(dtype);
      for (int64_t b = 0; b < cols / block.elements; ++b)
        quantize_block(dtype, values + b * block.elements, out + b * block.bytes);
    }
  }
}

}  // namespace snapstream::kernels
