// Finds the matrices a runner's matmuls read in whole rows and regroups them in parallel.
#include "runtime/grouped_weights.h"

#include <algorithm>

#include "graph/executor.h"
#include "kernels/row_groups.h"
#include "runtime/model_weight_kinds.h"

namespace snapstream::runtime {

GroupedWeights::GroupedWeights(const Model& model, const graph::GraphCache& graphs, int32_t shard, kernels::ThreadPool& pool) {
  std::map<WeightSliceKey, kernels::WeightView> as_stored;
  for (const graph::Graph& g : graphs.graphs())
    for (const graph::Op& op : g.flattened()) {
      if (op.kind != graph::OpKind::MatMul) continue;
      if (shard >= 0 && op.shard != shard && !op.replicated) continue;
      const WeightSliceKey key = weight_slice_key(op.weight, op.layer);
      if (as_stored.count(key) != 0) continue;
      const kernels::WeightView whole = model_matrix(model, op.weight.kind, op.layer);
      const kernels::WeightView view = graph::slice_of(whole, op.weight);
      // A column slice of every column (one shard's attention output and down projections) reads
      // whole rows as well.
      if (view.cols != whole.cols) continue;
      if (kernels::row_groups_supported(view)) as_stored.emplace(key, view);
    }
  int64_t total = 0;
  for (const auto& [key, view] : as_stored) total += cache_line_aligned(kernels::row_groups_bytes(view));
  if (total == 0) return;
  storage_ = LazyPages(static_cast<size_t>(total), PageSize::Huge);
  std::byte* next = storage_.data();
  for (const auto& entry : as_stored) {
    const kernels::WeightView& view = entry.second;  // named, so the lambda below can capture it
    // An f32 or f16 matrix's last group may be partial (padded in the copy); others hold whole groups.
    const int64_t groups = (view.rows + kernels::kRowGroupRows - 1) / kernels::kRowGroupRows;
    const int64_t group_bytes = kernels::kRowGroupRows * view.row_stride();
    pool.parallel_for(groups, [&](int64_t begin, int64_t end) {
      kernels::write_row_groups(view.row_slice(begin * kernels::kRowGroupRows, std::min(view.rows, end * kernels::kRowGroupRows)),
                                next + begin * group_bytes);
    }, group_bytes);
    kernels::WeightView grouped = view;
    grouped.data = next;
    grouped.layout = kernels::WeightLayout::RowGroups;
    views_.emplace(entry.first, grouped);
    next += cache_line_aligned(kernels::row_groups_bytes(view));
  }
}

const kernels::WeightView* GroupedWeights::find(const graph::WeightSlice& slice, int64_t layer) const {
  const auto it = views_.find(weight_slice_key(slice, layer));
  return it == views_.end() ? nullptr : &it->second;
}

}  // namespace snapstream::runtime
