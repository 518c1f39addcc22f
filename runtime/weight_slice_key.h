// The key a runner's copies of weight slices are found by: the matrix, its layer, and the slice's
// rows and columns, as the graph's ops name them.
#pragma once

#include <cstdint>
#include <tuple>

#include "graph/ir.h"

namespace snapstream::runtime {

using WeightSliceKey = std::tuple<graph::WeightKind, int64_t, int64_t, int64_t, int64_t, int64_t>;

inline WeightSliceKey weight_slice_key(const graph::WeightSlice& slice, int64_t layer) {
  return {slice.kind, layer, slice.row_begin, slice.row_end, slice.col_begin, slice.col_end};
}

}  // namespace snapstream::runtime
