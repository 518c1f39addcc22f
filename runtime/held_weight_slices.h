// A tensor-parallel rank's own copies of the column slices its shard reads. A row slice is read
// in place from the mapped file, touching only its own pages; a column slice takes a piece of
// every row, so read in place it would keep the whole matrix resident on every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "graph/graph_cache.h"
#include "kernels/weight_view.h"
#include "runtime/lazy_pages.h"
#include "runtime/model.h"
#include "runtime/weight_slice_key.h"

namespace snapstream::runtime {

class HeldWeightSlices {
 public:
  // Copies every column slice that shard `shard`'s matmuls in `graphs` read from `model`.
  HeldWeightSlices(const Model& model, const graph::GraphCache& graphs, int32_t shard);

  // This rank's copy of `slice` of layer `layer`'s matrix, or null when it is read in place.
  const kernels::WeightView* find(const graph::WeightSlice& slice, int64_t layer) const;
  int64_t count() const { return static_cast<int64_t>(views_.size()); }

 private:
  std::map<WeightSliceKey, kernels::WeightView> views_;
  LazyPages storage_;  // the packed slices
};

}  // namespace snapstream::runtime
