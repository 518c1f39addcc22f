// The GGUF writer for loaded models: every slot of the layout filled from the model's weights.
#include "runtime/model_to_gguf.h"

#include <cstring>

#include "runtime/errors.h"
#include "runtime/gguf_model_layout.h"
#include "runtime/gguf_types.h"
#include "runtime/gguf_writer.h"

namespace snapstream::runtime {
namespace {

const kernels::WeightView& matrix_of(const ModelWeights& w, const TensorSlot& slot) {
  if (slot.role == TensorRole::Embedding) return w.token_embedding;
  if (slot.role == TensorRole::Classifier) return w.output;
  const LayerWeights& layer = w.layers.at(static_cast<size_t>(slot.layer));
  switch (slot.role) {
    case TensorRole::Query: return layer.wq;
    case TensorRole::Key: return layer.wk;
    case TensorRole::Value: return layer.wv;
    case TensorRole::Output: return layer.wo;
    case TensorRole::Gate: return layer.w_gate;
    case TensorRole::Up: return layer.w_up;
    case TensorRole::Down: return layer.w_down;
    default: throw ContractError("tensor " + slot.name + " is not a matrix");
  }
}

const float* vector_of(const ModelWeights& w, const TensorSlot& slot) {
  if (slot.role == TensorRole::FinalNorm) return w.final_norm;
  const LayerWeights& layer = w.layers.at(static_cast<size_t>(slot.layer));
  switch (slot.role) {
    case TensorRole::AttentionNorm: return layer.attention_norm;
    case TensorRole::MlpNorm: return layer.mlp_norm;
    case TensorRole::QueryBias: return layer.bq;
    case TensorRole::KeyBias: return layer.bk;
    case TensorRole::ValueBias: return layer.bv;
    case TensorRole::OutputBias: return layer.bo;
    default: throw ContractError("tensor " + slot.name + " is not a vector");
  }
}

}  // namespace

void write_model_gguf(const Model& model, const std::string& name, const std::string& path) {
  if (model.weights.rope_divisors != nullptr)
    throw ConfigError("the model has per-pair rope frequency divisors (rope_freqs.weight), which the writer does not carry");
  GgufWriter writer;
  add_shape_metadata(writer, model.shape, name, gguf_file_type(model.weights.wq_dtype()));
  add_sentence_piece_metadata(writer, model.tokenizer);
  for_each_tensor_slot(model.shape, [&](const TensorSlot& slot) {
    if (!slot.matrix) {
      const float* values = vector_of(model.weights, slot);
      if (values == nullptr) throw ContractError("the model has no " + slot.name);
      writer.add_tensor(slot.name, {slot.cols}, ggml_type_info(kernels::DType::F32).code,
                        [=](std::byte* out, uint64_t bytes) { std::memcpy(out, values, bytes); });
      return;
    }
    const kernels::WeightView& view = matrix_of(model.weights, slot);
    if (view.rows != slot.rows || view.cols != slot.cols || view.first_col != 0)
      throw ConfigError("tensor " + slot.name + " is not a whole matrix of its shape");
    writer.add_tensor(slot.name, {slot.cols, slot.rows}, ggml_type_info(view.dtype).code, [view](std::byte* out, uint64_t) {
      const int64_t bytes = kernels::row_bytes(view.dtype, view.cols);
      for (int64_t r = 0; r < view.rows; ++r) std::memcpy(out + r * bytes, view.row(r), static_cast<size_t>(bytes));
    });
  });
  writer.write(path);
}

}  // namespace snapstream::runtime
