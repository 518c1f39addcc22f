// Packs a shard's column slices row after row, each row from the block holding its first column.
#include "runtime/held_weight_slices.h"

#include <cstring>

#include "graph/executor.h"
#include "runtime/model_weight_kinds.h"

namespace snapstream::runtime {
namespace {

// Bytes of each packed row of `view`: whole blocks from the one holding its first column.
int64_t packed_row_bytes(const kernels::WeightView& view) {
  const kernels::BlockLayout block = kernels::block_layout(view.dtype);
  const int64_t blocks = (view.first_col + view.cols + block.elements - 1) / block.elements;
  return blocks * block.bytes;
}

}  // namespace

HeldWeightSlices::HeldWeightSlices(const Model& model, const graph::GraphCache& graphs, int32_t shard) {
  // Every distinct column slice the shard's matmuls read, with the view that reads it in place.
  std::map<WeightSliceKey, kernels::WeightView> in_place;
  for (const graph::Graph& g : graphs.graphs())
    for (const graph::Op& op : g.flattened()) {
      if (op.kind != graph::OpKind::MatMul || op.replicated || op.shard != shard) continue;
      if (op.weight.col_end <= op.weight.col_begin) continue;
      const WeightSliceKey key = weight_slice_key(op.weight, op.layer);
      if (in_place.count(key) == 0)
        in_place.emplace(key, graph::slice_of(model_matrix(model, op.weight.kind, op.layer), op.weight));
    }
  int64_t total = 0;
  for (const auto& [key, view] : in_place) total += cache_line_aligned(view.rows * packed_row_bytes(view));
  storage_ = LazyPages(static_cast<size_t>(total), PageSize::Huge);
  std::byte* next = storage_.data();
  for (const auto& [key, view] : in_place) {
    const int64_t row_bytes = packed_row_bytes(view);
    for (int64_t r = 0; r < view.rows; ++r) std::memcpy(next + r * row_bytes, view.row(r), static_cast<size_t>(row_bytes));
    views_.emplace(key, kernels::WeightView{view.dtype, next, view.rows, view.cols, row_bytes, view.first_col});
    next += cache_line_aligned(view.rows * row_bytes);
  }
}

const kernels::WeightView* HeldWeightSlices::find(const graph::WeightSlice& slice, int64_t layer) const {
  const auto it = views_.find(weight_slice_key(slice, layer));
  return it == views_.end() ? nullptr : &it->second;
}

}  // namespace snapstream::runtime
