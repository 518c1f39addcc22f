// Weight lookup by graph::WeightKind over runtime::ModelWeights.
#include "runtime/model_weight_kinds.h"

#include <string>

#include "runtime/errors.h"

namespace snapstream::runtime {
namespace {

const LayerWeights& layer_of(const Model& model, int64_t layer) {
  if (layer < 0 || layer >= static_cast<int64_t>(model.weights.layers.size()))
    throw ContractError("layer " + std::to_string(layer) + " is not one of the model's " + std::to_string(model.weights.layers.size()));
  return model.weights.layers[static_cast<size_t>(layer)];
}

}  // namespace

kernels::WeightView model_matrix(const Model& model, graph::WeightKind kind, int64_t layer) {
  const ModelWeights& w = model.weights;
  using K = graph::WeightKind;
  switch (kind) {
    case K::Embedding: return w.token_embedding;
    case K::Output: return w.output;
    case K::Wq: return layer_of(model, layer).wq;
    case K::Wk: return layer_of(model, layer).wk;
    case K::Wv: return layer_of(model, layer).wv;
    case K::Wo: return layer_of(model, layer).wo;
    case K::Gate: return layer_of(model, layer).w_gate;
    case K::Up: return layer_of(model, layer).w_up;
    case K::Down: return layer_of(model, layer).w_down;
    default: throw ContractError("weight " + std::string(graph::weight_kind_name(kind)) + " is not a matrix");
  }
}

const float* model_norm(const Model& model, graph::WeightKind kind, int64_t layer) {
  using K = graph::WeightKind;
  switch (kind) {
    case K::AttentionNorm: return layer_of(model, layer).attention_norm;
    case K::MlpNorm: return layer_of(model, layer).mlp_norm;
    case K::FinalNorm: return model.weights.final_norm;
    default: throw ContractError("weight " + std::string(graph::weight_kind_name(kind)) + " is not a vector");
  }
}

const float* model_bias(const Model& model, graph::WeightKind kind, int64_t layer) {
  using K = graph::WeightKind;
  switch (kind) {
    case K::Wq: return layer_of(model, layer).bq;
    case K::Wk: return layer_of(model, layer).bk;
    case K::Wv: return layer_of(model, layer).bv;
    case K::Wo: return layer_of(model, layer).bo;
    default: return nullptr;
  }
}

}  // namespace snapstream::runtime
