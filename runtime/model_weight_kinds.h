// Looks up a loaded model's weights by the graph IR's weight kinds, the names compiled graphs
// read their weights by.
#pragma once

#include <cstdint>

#include "graph/ir.h"
#include "kernels/weight_view.h"
#include "runtime/model.h"

namespace snapstream::runtime {

// The whole matrix of `kind` (layer -1 for the embedding and the classifier). Throws
// ContractError for a kind that is no matrix of this model.
kernels::WeightView model_matrix(const Model& model, graph::WeightKind kind, int64_t layer);
// A norm weight [dim]. Throws ContractError for a kind that is no norm.
const float* model_norm(const Model& model, graph::WeightKind kind, int64_t layer);
// The bias of a projection, or null when the model has none.
const float* model_bias(const Model& model, graph::WeightKind kind, int64_t layer);

}  // namespace snapstream::runtime
