// Llama-family models from GGUF (llama, and qwen2 with its biases and half-split RoPE):
// hyper-parameters from `{architecture}.*` metadata, the vocabulary from `tokenizer.ggml.*`, and
// weights used in place from the mapping.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "graph/errors.h"
#include "kernels/dequantize.h"
#include "runtime/errors.h"
#include "runtime/gguf_file.h"
#include "runtime/model_loaders.h"
#include "runtime/tokenizer_gguf.h"

namespace snapstream::runtime {
namespace {

using kernels::DType;
using kernels::WeightView;

class GgufModelReader {
 public:
  GgufModelReader(const GgufFile& gguf, Model& model) : gguf_(gguf), model_(model) {}

  uint64_t required_uint(const std::string& key) const {
    const GgufValue* value = gguf_.find(key);
    if (value == nullptr) fail("missing metadata key '" + key + "'");
    const auto number = value->as_uint();
    if (!number) fail("metadata key '" + key + "' must be a non-negative integer, got " + value->to_display());
    return *number;
  }

  float optional_float(const std::string& key, float fallback) const {
    const GgufValue* value = gguf_.find(key);
    if (value == nullptr) return fallback;
    const auto number = value->as_double();
    if (!number) fail("metadata key '" + key + "' must be a number, got " + value->to_display());
    return static_cast<float>(*number);
  }

  WeightView matrix(const std::string& name, int64_t rows, int64_t cols) {
    const GgufTensor& tensor = find(name);
    if (tensor.dims.size() != 2 || tensor.dims[0] != cols || tensor.dims[1] != rows)
      fail("tensor '" + name + "' has shape " + shape_text(tensor.dims) + ", expected [" + std::to_string(cols) + ", " +
           std::to_string(rows) + "]");
    const DType dtype = computable_dtype(tensor);
    const auto* data = tensor.data;
    // Block types are read bytewise; the float types are read as their element type.
    const size_t element_alignment = kernels::block_quantised(dtype) ? 1 : static_cast<size_t>(kernels::block_layout(dtype).bytes);
    if (reinterpret_cast<uintptr_t>(data) % element_alignment != 0) {
      auto& copy = model_.owned_tensors.emplace_back((tensor.bytes + 3) / 4);
      std::memcpy(copy.data(), data, tensor.bytes);
      data = reinterpret_cast<const std::byte*>(copy.data());
    }
    return WeightView{dtype, data, rows, cols};
  }

  // 1-D tensors (norm weights) are small, so any dtype is expanded to an owned f32 copy.
  const float* vector(const std::string& name, int64_t length) {
    const GgufTensor& tensor = find(name);
    if (tensor.dims.size() != 1 || tensor.dims[0] != length)
      fail("tensor '" + name + "' has shape " + shape_text(tensor.dims) + ", expected [" + std::to_string(length) + "]");
    auto& copy = model_.owned_tensors.emplace_back(static_cast<size_t>(length));
    kernels::dequantize_row(computable_dtype(tensor), tensor.data, length, copy.data());
    return copy.data();
  }

  const GgufTensor& find(const std::string& name) const {
    const GgufTensor* tensor = gguf_.find_tensor(name);
    if (tensor == nullptr) fail("missing tensor '" + name + "'");
    return *tensor;
  }

  [[noreturn]] void fail(const std::string& problem) const { throw ModelFileError(gguf_.path(), problem); }

 private:
  DType computable_dtype(const GgufTensor& tensor) const {
    if (!tensor.type->dtype)
      fail("tensor '" + tensor.name + "' has type " + std::string(tensor.type->name) +
           ", which this engine cannot compute with (supported: " + computable_ggml_type_names() + ")");
    return *tensor.type->dtype;
  }

  static std::string shape_text(const std::vector<int64_t>& dims) {
    std::string text = "[";
    for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
    return text + "]";
  }

  const GgufFile& gguf_;
  Model& model_;
};

}  // namespace

std::unique_ptr<Model> load_gguf_model(std::shared_ptr<const MappedFile> file) {
  GgufFile gguf(file);
  auto model = std::make_unique<Model>();
  GgufModelReader reader(gguf, *model);

  const GgufValue* arch = gguf.find("general.architecture");
  if (arch == nullptr || arch->as_string() == nullptr) reader.fail("missing metadata key 'general.architecture'");
  const std::string architecture = *arch->as_string();
  if (architecture != "llama" && architecture != "qwen2")
    reader.fail("architecture '" + architecture + "' is not supported (supported: llama, qwen2; Mistral and TinyLlama files declare llama)");
  // Hyper-parameters live under the architecture's own prefix: llama.block_count, qwen2.block_count.
  const std::string prefix = architecture + ".";

  graph::ModelShape& c = model->shape;
  c.architecture = architecture;
  const GgufValue* name = gguf.find("general.name");
  c.name = name && name->as_string() ? *name->as_string() : architecture;
  auto bounded = [&](const std::string& key) {
    const uint64_t value = reader.required_uint(prefix + key);
    if (value > (uint64_t{1} << 32)) reader.fail("metadata key '" + prefix + key + "' = " + std::to_string(value) + " is implausibly large");
    return static_cast<int64_t>(value);
  };
  auto has = [&](const std::string& key) { return gguf.find(prefix + key) != nullptr; };
  c.dim = bounded("embedding_length");
  c.hidden_dim = bounded("feed_forward_length");
  c.layers = bounded("block_count");
  c.heads = bounded("attention.head_count");
  c.kv_heads = has("attention.head_count_kv") ? bounded("attention.head_count_kv") : c.heads;
  c.context_length = bounded("context_length");
  c.norm_eps = reader.optional_float(prefix + "attention.layer_norm_rms_epsilon", 1e-5f);
  c.rope_theta = reader.optional_float(prefix + "rope.freq_base", 10000.0f);
  c.rope_pairs = architecture == "qwen2" ? kernels::RopePairs::Halves : kernels::RopePairs::Adjacent;
  if (has("attention.key_length")) c.head_dim = bounded("attention.key_length");
  c.attention_bias = gguf.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.attention_output_bias = gguf.find_tensor("blk.0.attn_output.bias") != nullptr;
  const GgufTensor& embedding = reader.find("token_embd.weight");
  c.vocab = embedding.dims.size() == 2 ? embedding.dims[1] : 0;
  c.tied_embeddings = gguf.find_tensor("output.weight") == nullptr;
  try {
    c.finalise();
  } catch (const graph::ShapeError& e) {
    reader.fail(e.what());
  }
  if (has("attention.value_length") && bounded("attention.value_length") != c.head_dim)
    reader.fail("attention.value_length differs from the key length: heads with different key and value widths are not supported");
  if (has("rope.dimension_count") && bounded("rope.dimension_count") != c.head_dim)
    reader.fail("partial rotary embeddings (" + prefix + "rope.dimension_count != head_dim) are not supported");

  const int64_t d = c.dim, q = c.heads * c.head_dim, kv = c.kv_dim(), h = c.hidden_dim;
  ModelWeights& w = model->weights;
  w.token_embedding = reader.matrix("token_embd.weight", c.vocab, d);
  w.layers.resize(static_cast<size_t>(c.layers));
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    LayerWeights& layer = w.layers[static_cast<size_t>(i)];
    layer.attention_norm = reader.vector(blk + "attn_norm.weight", d);
    layer.wq = reader.matrix(blk + "attn_q.weight", q, d);
    layer.wk = reader.matrix(blk + "attn_k.weight", kv, d);
    layer.wv = reader.matrix(blk + "attn_v.weight", kv, d);
    layer.wo = reader.matrix(blk + "attn_output.weight", d, q);
    if (c.attention_bias) {
      layer.bq = reader.vector(blk + "attn_q.bias", q);
      layer.bk = reader.vector(blk + "attn_k.bias", kv);
      layer.bv = reader.vector(blk + "attn_v.bias", kv);
    }
    if (c.attention_output_bias) layer.bo = reader.vector(blk + "attn_output.bias", d);
    layer.mlp_norm = reader.vector(blk + "ffn_norm.weight", d);
    layer.w_gate = reader.matrix(blk + "ffn_gate.weight", h, d);
    layer.w_up = reader.matrix(blk + "ffn_up.weight", h, d);
    layer.w_down = reader.matrix(blk + "ffn_down.weight", d, h);
  }
  w.final_norm = reader.vector("output_norm.weight", d);
  w.output = c.tied_embeddings ? w.token_embedding : reader.matrix("output.weight", c.vocab, d);
  if (gguf.find_tensor("rope_freqs.weight") != nullptr) {
    w.rope_divisors = reader.vector("rope_freqs.weight", c.head_dim / 2);
    for (int64_t i = 0; i < c.head_dim / 2; ++i)
      if (!(w.rope_divisors[i] > 0.0f) || !std::isfinite(w.rope_divisors[i]))
        reader.fail("rope_freqs.weight holds " + std::to_string(w.rope_divisors[i]) + ", not a positive frequency divisor");
  }

  model->tokenizer = read_gguf_tokenizer(gguf);
  const GgufValue* chat_template = gguf.find("tokenizer.chat_template");
  if (chat_template != nullptr && chat_template->as_string() != nullptr) model->chat_template = *chat_template->as_string();
  if (model->tokenizer.vocab_size() != c.vocab)
    reader.fail("the vocabulary has " + std::to_string(model->tokenizer.vocab_size()) + " tokens but token_embd.weight has " +
                std::to_string(c.vocab) + " rows");
  model->path = file->path();
  model->format = "gguf";
  model->mapping = std::move(file);
  return model;
}

}  // namespace snapstream::runtime
