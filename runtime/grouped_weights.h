// This runner's copies of the matrices its matmuls read whole rows of, regrouped sixteen rows at
// a time where the CPU's kernels read them faster so (kernels/row_groups.h). The copies hold the
// same bytes as the file's rows (and an f32 matrix's padding to whole groups), so what a step
// reads does not grow.
#pragma once

#include <cstdint>
#include <map>

#include "graph/graph_cache.h"
#include "kernels/thread_pool.h"
#include "kernels/weight_view.h"
#include "runtime/lazy_pages.h"
#include "runtime/model.h"
#include "runtime/weight_slice_key.h"

namespace snapstream::runtime {

class GroupedWeights {
 public:
  // Regroups every matrix (or row slice) that `shard`'s matmuls in `graphs` read without cutting
  // its rows (every shard's when `shard` is -1), if the CPU's kernels read it in groups.
  GroupedWeights(const Model& model, const graph::GraphCache& graphs, int32_t shard, kernels::ThreadPool& pool);

  // The regrouped copy of `slice` of layer `layer`'s matrix, or null when it is read as stored.
  const kernels::WeightView* find(const graph::WeightSlice& slice, int64_t layer) const;
  int64_t count() const { return static_cast<int64_t>(views_.size()); }

 private:
  std::map<WeightSliceKey, kernels::WeightView> views_;
  LazyPages storage_;
};

}  // namespace snapstream::runtime
