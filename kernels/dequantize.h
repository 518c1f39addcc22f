// Expansion of weight rows from their storage dtype to f32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/weight_view.h"

namespace snapstream::kernels {

// Writes `cols` floats decoded from one stored row; block types need whole
// blocks.
void dequantize_row(DType dtype, const std::byte* row, int64_t cols, float* out);

// Writes `cols` floats: elements [first, first + cols) of the stored row at
// `row`, where `first` may fall inside a block (a column slice of a
// block-quantised matrix).
void dequantize_span(DType dtype, const std::byte* row, int64_t first, int64_t cols, float* out);

// Writes rows [begin, end) of `w` into out[(r - begin) * w.cols + c].
void dequantize_rows(const WeightView& w, int64_t begin, int64_t end, float* out);

}  // namespace snapstream::kernels
