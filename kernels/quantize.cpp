// Row encoders for every weight dtype; used when writing model files.
#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace snapstream::kernels {

void quantize_row(DType dtype, const float* values, int64_t cols, std::byte* out) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(out, values, static_cast<size_t>(cols) * sizeof(float));
      return;
    case DType::F16:
    case DType::BF16:
      for (int64_t i = 0; i < cols; ++i) {
        const uint16_t bits = dtype == DType::F16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
        std::memcpy(out + 2 * i, &bits, 2);
      }
      return;
    case DType::Q8_0:
      for (int64_t b = 0; b < cols / kQ8BlockSize; ++b) {
        const float* x = values + b * kQ8BlockSize;
        float amax = 0.0f;
        for (int64_t i = 0; i < kQ8BlockSize; ++i) amax = std::max(amax, std::fabs(x[i]));
        const float scale = amax / 127.0f;
        const float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
        std::byte* block = out + b * kQ8BlockBytes;
        const uint16_t scale_bits = f32_to_f16(scale);
        std::memcpy(block, &scale_bits, 2);
        for (int64_t i = 0; i < kQ8BlockSize; ++i) {
          const auto q = static_cast<int8_t>(std::lround(x[i] * inverse));
          std::memcpy(block + 2 + i, &q, 1);
        }
      }
      return;
  }
}

}  // namespace snapstream::kernels
