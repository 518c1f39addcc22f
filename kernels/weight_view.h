// A read-only view of a row-major weight matrix [rows][cols] stored in any supported dtype.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::kernels {

// How a matrix's bytes are ordered. RowGroups holds the same bytes as Rows, regrouped sixteen
// rows at a time for the integer kernels (kernels/row_groups.h); only matmul reads it.
enum class WeightLayout : uint8_t { Rows, RowGroups };

struct WeightView {
  DType dtype = DType::F32;
  const std::byte* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;  // bytes from one row to the next; 0 means rows are packed
  // A column slice that starts inside a block: its first column is element `first_col` of the
  // block at the start of each row (0 otherwise).
  int64_t first_col = 0;
  WeightLayout layout = WeightLayout::Rows;

  int64_t row_stride() const { return stride != 0 ? stride : row_bytes(dtype, cols); }
  bool packed() const { return first_col == 0 && (stride == 0 || stride == row_bytes(dtype, cols)); }
  const std::byte* row(int64_t r) const { return data + r * row_stride(); }
  int64_t total_bytes() const { return rows * row_bytes(dtype, cols); }

  // Rows [begin, end): still packed if this view was. A RowGroups view's bytes of whole groups
  // lie where its rows' bytes would, so it slices at multiples of sixteen rows.
  WeightView row_slice(int64_t begin, int64_t end) const {
    return {dtype, row(begin), end - begin, cols, stride, first_col, layout};
  }
  // Columns [begin, end) of every row. A slice whose edges fall inside a block still reads
  // whole blocks: a block is never split in storage. Only Rows views are cut by columns.
  WeightView column_slice(int64_t begin, int64_t end) const {
    const BlockLayout block = block_layout(dtype);
    const int64_t first = first_col + begin;
    return {dtype, data + first / block.elements * block.bytes, rows, end - begin, row_stride(), first % block.elements};
  }
};

}  // namespace snapstream::kernels
