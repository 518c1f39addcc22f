// A read-only view of a row-major weight matrix [rows][cols] stored in any supported dtype.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::kernels {

struct WeightView {
  DType dtype = DType::F32;
  const std::byte* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;  // bytes from one row to the next; 0 means rows are packed

  int64_t row_stride() const { return stride != 0 ? stride : row_bytes(dtype, cols); }
  bool packed() const { return stride == 0 || stride == row_bytes(dtype, cols); }
  const std::byte* row(int64_t r) const { return data + r * row_stride(); }
  int64_t total_bytes() const { return rows * row_bytes(dtype, cols); }

  // Rows [begin, end): still packed if this view was.
  WeightView row_slice(int64_t begin, int64_t end) const { return {dtype, row(begin), end - begin, cols, stride}; }
  // Columns [begin, end) of every row; `begin` must fall on a block boundary for Q8_0.
  WeightView column_slice(int64_t begin, int64_t end) const {
    return {dtype, data + row_bytes(dtype, begin), rows, end - begin, row_stride()};
  }
};

}  // namespace snapstream::kernels
