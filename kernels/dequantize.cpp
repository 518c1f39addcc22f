// Row decoders for every weight dtype; used for embeddings, prefill tiles and tests.
#include "kernels/dequantize.h"

#include <cstring>

namespace snapstream::kernels {

void dequantize_row(DType dtype, const std::byte* row, int64_t cols, float* out) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(out, row, static_cast<size_t>(cols) * sizeof(float));
      return;
    case DType::F16:
    case DType::BF16: {
      const bool is_f16 = dtype == DType::F16;
      for (int64_t i = 0; i < cols; ++i) {
        uint16_t bits;
        std::memcpy(&bits, row + 2 * i, 2);
        out[i] = is_f16 ? f16_to_f32(bits) : bf16_to_f32(bits);
      }
      return;
    }
    case DType::Q8_0:
      for (int64_t b = 0; b < cols / kQ8BlockSize; ++b) {
        const std::byte* block = row + b * kQ8BlockBytes;
        uint16_t scale_bits;
        std::memcpy(&scale_bits, block, 2);
        const float scale = f16_to_f32(scale_bits);
        const auto* q = reinterpret_cast<const int8_t*>(block + 2);
        for (int64_t i = 0; i < kQ8BlockSize; ++i) out[b * kQ8BlockSize + i] = scale * static_cast<float>(q[i]);
      }
      return;
  }
}

void dequantize_rows(const WeightView& w, int64_t begin, int64_t end, float* out) {
  for (int64_t r = begin; r < end; ++r) dequantize_row(w.dtype, w.row(r), w.cols, out + (r - begin) * w.cols);
}

}  // namespace snapstream::kernels
