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

  const std::byte* row(int64_t r) const { return data + r * row_bytes(dtype, cols); }
  int64_t total_bytes() const { return rows * row_bytes(dtype, cols); }
};

}  // namespace snapstream::kernels
