// Row decoders for every weight dtype; used for embeddings, prefill tiles,
// quantised decode rows and tests. Block types decode a block at a time
// (quant_blocks.h).
#include <algorithm>
#include <cstring>

#include "kernels/dequantize.h"
#include "kernels/cpu/f16_rows.h"
#include "kernels/quant_blocks.h"

namespace snapstream::kernels {
namespace {
constexpr int64_t kLargestBlock = 256;
}  // namespace

void dequantize_row(DType dtype, const std::byte* row, int64_t cols, float* out) {
  switch (dtype) {
    case DType::F32: std::memcpy(out, row, static_cast<size_t>(cols) * sizeof(float)); return;
    case DType::F16: cpu::widen_f16_row(row, cols, out); return;
    case DType::BF16:
      for (int64_t i = 0; i < cols; ++i) {
        uint16_t bits;
        std::memcpy(&bits, row + 2 * i, 2);
        out[i] = bf16_to_f32(bits);
      }
      return;
    default: {
      const BlockLayout block = block_layout(dtype);
      for (int64_t b = 0; b < cols / block.elements; ++b)
        dequantize_block(dtype, row + b * block.bytes, out + b * block.elements);
    }
  }
}

void dequantize_span(DType dtype, const std::byte* row, int64_t first, int64_t cols, float* out) {
  const BlockLayout block = block_layout(dtype);
  if (block.elements == 1) return dequantize_row(dtype, row + first * block.bytes, cols, out);
  float buffer[kLargestBlock];
  int64_t done = 0;
  for (int64_t b = first / block.elements; done < cols; ++b) {
    const int64_t skip = b == first / block.elements ? first % block.elements : 0;
    const int64_t take = std::min(block.elements - skip, cols - done);
    if (skip == 0 && take == block.elements) {
      dequantize_block(dtype, row + b * block.bytes, out + done);
    } else {
      dequantize_block(dtype, row + b * block.bytes, buffer);
      std::copy_n(buffer + skip, take, out + done);
    }
    done += take;
  }
}

void dequantize_rows(const WeightView& w, int64_t begin, int64_t end, float* out) {
  for (int64_t r = begin; r < end; ++r) dequantize_span(w.dtype, w.row(r), w.first_col, w.cols, out + (r - begin) * w.cols);
}

}  // namespace snapstream::kernels
