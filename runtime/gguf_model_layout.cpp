// The GGUF layout of Llama-family models: metadata keys and tensor names as llama.cpp writes them.
#include "runtime/gguf_model_layout.h"

#include "runtime/errors.h"

namespace snapstream::runtime {
namespace {

GgufValue u32(int64_t v) { return GgufValue::unsigned_int(GgufValueType::UInt32, static_cast<uint64_t>(v)); }
GgufValue f32(double v) { return GgufValue::floating(GgufValueType::Float32, v); }

// GGUF's SentencePiece pieces spell a space as U+2581.
std::string gguf_piece(const std::string& text) {
  std::string stored;
  for (char c : text) stored += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
  return stored;
}

// tokenizer.ggml.token_type codes, 1..6 in TokenKind's order.
int64_t token_type_code(TokenKind kind) { return static_cast<int64_t>(kind) + 1; }

// llama.cpp's choice of the layers whose attn_v and ffn_down get more bits: the first and last
// eighth, and every third layer between.
bool more_bits(int64_t layer, int64_t layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

}  // namespace

uint32_t gguf_file_type(kernels::DType dtype) {
  switch (dtype) {
    case kernels::DType::F32: return 0;
    case kernels::DType::F16: return 1;
    case kernels::DType::Q8_0: return 7;
    case kernels::DType::Q4_0: return 2;
    case kernels::DType::Q5_0: return 8;
    case kernels::DType::Q4_K: return 14;
    case kernels::DType::Q5_K: return 16;
    case kernels::DType::Q6_K: return 18;
    case kernels::DType::BF16: return 32;
  }
  return 0;
}

void add_shape_metadata(GgufWriter& writer, const graph::ModelShape& c, const std::string& name, uint32_t file_type) {
  const std::string arch = c.architecture + ".";
  writer.add_metadata("general.architecture", GgufValue::string(c.architecture));
  writer.add_metadata("general.name", GgufValue::string(name));
  writer.add_metadata("general.file_type", u32(file_type));
  struct Key {
    const char* name;
    double value;
    bool real;  // Float32, else UInt32
  };
  const Key keys[] = {{"context_length", static_cast<double>(c.context_length), false},
                      {"embedding_length", static_cast<double>(c.dim), false},
                      {"feed_forward_length", static_cast<double>(c.hidden_dim), false},
                      {"block_count", static_cast<double>(c.layers), false},
                      {"attention.head_count", static_cast<double>(c.heads), false},
                      {"attention.head_count_kv", static_cast<double>(c.kv_heads), false},
                      {"attention.key_length", static_cast<double>(c.head_dim), false},
                      {"attention.value_length", static_cast<double>(c.head_dim), false},
                      {"attention.layer_norm_rms_epsilon", c.norm_eps, true},
                      {"rope.freq_base", c.rope_theta, true},
                      {"rope.dimension_count", static_cast<double>(c.head_dim), false},
                      {"vocab_size", static_cast<double>(c.vocab), false}};
  for (const Key& key : keys)
    writer.add_metadata(arch + key.name, key.real ? f32(key.value) : u32(static_cast<int64_t>(key.value)));
}

void add_sentence_piece_metadata(GgufWriter& writer, const Tokenizer& tokenizer) {
  const Vocabulary& v = tokenizer.vocabulary();
  if (v.model != TokenizerModel::SentencePiece)
    throw ConfigError("only SentencePiece vocabularies can be written; this model's tokenizer is byte-level BPE");
  GgufValue::Array tokens, scores, types;
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    tokens.push_back(GgufValue::string(gguf_piece(tokenizer.piece(id))));
    scores.push_back(f32(tokenizer.score(id)));
    types.push_back(GgufValue::signed_int(GgufValueType::Int32, token_type_code(tokenizer.kind(id))));
  }
  writer.add_metadata("tokenizer.ggml.model", GgufValue::string("llama"));
  writer.add_metadata("tokenizer.ggml.tokens", GgufValue::array(GgufValueType::String, std::move(tokens)));
  writer.add_metadata("tokenizer.ggml.scores", GgufValue::array(GgufValueType::Float32, std::move(scores)));
  writer.add_metadata("tokenizer.ggml.token_type", GgufValue::array(GgufValueType::Int32, std::move(types)));
  if (v.bos_id >= 0) writer.add_metadata("tokenizer.ggml.bos_token_id", u32(v.bos_id));
  if (v.eos_id >= 0) writer.add_metadata("tokenizer.ggml.eos_token_id", u32(v.eos_id));
  if (v.unknown_id >= 0) writer.add_metadata("tokenizer.ggml.unknown_token_id", u32(v.unknown_id));
  writer.add_metadata("tokenizer.ggml.add_bos_token", GgufValue::boolean(v.add_bos));
  writer.add_metadata("tokenizer.ggml.add_eos_token", GgufValue::boolean(v.add_eos));
}

void for_each_tensor_slot(const graph::ModelShape& c, const std::function<void(const TensorSlot&)>& visit) {
  const int64_t q_dim = c.heads * c.head_dim;
  auto matrix = [&](std::string name, TensorRole role, int64_t layer, int64_t rows, int64_t cols, bool favoured) {
    visit({std::move(name), role, layer, rows, cols, true, favoured});
  };
  auto vector = [&](std::string name, TensorRole role, int64_t layer, int64_t size) {
    visit({std::move(name), role, layer, 1, size, false, false});
  };
  matrix("token_embd.weight", TensorRole::Embedding, -1, c.vocab, c.dim, c.tied_embeddings);
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string prefix = "blk." + std::to_string(l) + ".";
    const bool favoured = more_bits(l, c.layers);
    vector(prefix + "attn_norm.weight", TensorRole::AttentionNorm, l, c.dim);
    matrix(prefix + "attn_q.weight", TensorRole::Query, l, q_dim, c.dim, false);
    matrix(prefix + "attn_k.weight", TensorRole::Key, l, c.kv_dim(), c.dim, false);
    matrix(prefix + "attn_v.weight", TensorRole::Value, l, c.kv_dim(), c.dim, favoured);
    if (c.attention_bias) {
      vector(prefix + "attn_q.bias", TensorRole::QueryBias, l, q_dim);
      vector(prefix + "attn_k.bias", TensorRole::KeyBias, l, c.kv_dim());
      vector(prefix + "attn_v.bias", TensorRole::ValueBias, l, c.kv_dim());
    }
    matrix(prefix + "attn_output.weight", TensorRole::Output, l, c.dim, q_dim, false);
    if (c.attention_output_bias) vector(prefix + "attn_output.bias", TensorRole::OutputBias, l, c.dim);
    vector(prefix + "ffn_norm.weight", TensorRole::MlpNorm, l, c.dim);
    matrix(prefix + "ffn_gate.weight", TensorRole::Gate, l, c.hidden_dim, c.dim, false);
    matrix(prefix + "ffn_up.weight", TensorRole::Up, l, c.hidden_dim, c.dim, false);
    matrix(prefix + "ffn_down.weight", TensorRole::Down, l, c.dim, c.hidden_dim, favoured);
  }
  vector("output_norm.weight", TensorRole::FinalNorm, -1, c.dim);
  if (!c.tied_embeddings) matrix("output.weight", TensorRole::Classifier, -1, c.vocab, c.dim, true);
}

}  // namespace snapstream::runtime
