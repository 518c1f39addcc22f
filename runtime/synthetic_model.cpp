// The synthetic model writer. Each tensor draws from its own seeded stream, so a file is
// the same for the same seed whatever order tensors are written in.
#include "runtime/synthetic_model.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "graph/errors.h"
#include "kernels/quantize.h"
#include "runtime/errors.h"
#include "runtime/gguf_writer.h"

namespace snapstream::runtime {
namespace {

constexpr float kWeightScale = 0.035f;  // uniform(-a, a) with a ≈ 0.02·√3: std 0.02, as in GPT-2-style inits

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::string gguf_piece(const std::string& text) {
  std::string stored;
  for (char c : text) stored += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
  return stored;
}

// llama.cpp's choice of the layers whose attn_v and ffn_down get more bits: the first and last
// eighth, and every third layer between.
bool more_bits(int64_t layer, int64_t layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

// A K-quant for rows of `cols`, or llama.cpp's fallback when the row is not whole 256-blocks.
kernels::DType k_quant_or_fallback(kernels::DType wanted, int64_t cols) {
  if (kernels::row_length_supported(wanted, cols)) return wanted;
  return wanted == kernels::DType::Q6_K ? kernels::DType::Q8_0 : kernels::DType::Q5_0;
}

uint32_t file_type(kernels::DType dtype) {
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

}  // namespace

Tokenizer synthetic_tokenizer(int64_t size) {
  if (size < 3 + 256 + 1) throw ConfigError("a synthetic vocabulary needs at least 260 tokens, got " + std::to_string(size));
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  std::vector<TokenKind> kinds = {TokenKind::Unknown, TokenKind::Control, TokenKind::Control};
  char name[8];
  for (int byte = 0; byte < 256; ++byte) {
    std::snprintf(name, sizeof name, "<0x%02X>", byte);
    pieces.emplace_back(name);
    kinds.push_back(TokenKind::Byte);
  }
  const std::string alphabet = " etaoinshrdlcumwfgypbvkjxqzETAOINSHRDLCUMWFGYPBVKJXQZ0123456789.,!?'\"-:;()";
  const auto first_text = static_cast<int64_t>(pieces.size());
  for (char c : alphabet) {
    if (static_cast<int64_t>(pieces.size()) == size) break;
    pieces.emplace_back(1, c);
    kinds.push_back(TokenKind::Normal);
  }
  // Extend earlier pieces by one lower-case letter or space-led letter, breadth first.
  const std::string extensions = "etaoinshrdlcumwfgypbvkjxqz";
  for (int64_t base = first_text; static_cast<int64_t>(pieces.size()) < size; ++base) {
    for (char c : extensions) {
      if (static_cast<int64_t>(pieces.size()) == size) break;
      pieces.push_back(pieces[static_cast<size_t>(base)] + c);
      kinds.push_back(TokenKind::Normal);
    }
  }
  std::vector<float> scores(pieces.size(), 0.0f);
  for (int64_t i = first_text; i < size; ++i) scores[static_cast<size_t>(i)] = -static_cast<float>(i - first_text);
  return Tokenizer(std::move(pieces), std::move(scores), std::move(kinds), 1, 2, 0);
}

void write_synthetic_model(const SyntheticModelOptions& options, const std::string& path) {
  graph::ModelShape c = options.shape;
  try {
    c.finalise();
  } catch (const graph::ShapeError& e) {
    throw ConfigError(e.what());
  }
  const int64_t block = kernels::block_layout(options.dtype).elements;
  if (!options.q4_k_m &&
      (!kernels::row_length_supported(options.dtype, c.dim) || !kernels::row_length_supported(options.dtype, c.hidden_dim) ||
       !kernels::row_length_supported(options.dtype, c.heads * c.head_dim)))
    throw ConfigError("dim, hidden_dim and heads x head_dim must be multiples of " + std::to_string(block) + " for " +
                      std::string(kernels::dtype_name(options.dtype)) + " (or use the q4_k_m mix, which falls back per tensor)");
  const Tokenizer tokenizer = synthetic_tokenizer(c.vocab);

  GgufWriter writer;
  auto u32 = [](uint64_t v) { return GgufValue::unsigned_int(GgufValueType::UInt32, v); };
  auto f32 = [](double v) { return GgufValue::floating(GgufValueType::Float32, v); };
  const std::string arch = c.architecture + ".";
  constexpr uint32_t kMostlyQ4KM = 15;  // llama.cpp's general.file_type for the Q4_K_M mix
  writer.add_metadata("general.architecture", GgufValue::string(c.architecture));
  writer.add_metadata("general.name", GgufValue::string(c.name + " (random weights)"));
  writer.add_metadata("general.file_type", u32(options.q4_k_m ? kMostlyQ4KM : file_type(options.dtype)));
  writer.add_metadata(arch + "context_length", u32(static_cast<uint64_t>(c.context_length)));
  writer.add_metadata(arch + "embedding_length", u32(static_cast<uint64_t>(c.dim)));
  writer.add_metadata(arch + "feed_forward_length", u32(static_cast<uint64_t>(c.hidden_dim)));
  writer.add_metadata(arch + "block_count", u32(static_cast<uint64_t>(c.layers)));
  writer.add_metadata(arch + "attention.head_count", u32(static_cast<uint64_t>(c.heads)));
  writer.add_metadata(arch + "attention.head_count_kv", u32(static_cast<uint64_t>(c.kv_heads)));
  writer.add_metadata(arch + "attention.key_length", u32(static_cast<uint64_t>(c.head_dim)));
  writer.add_metadata(arch + "attention.value_length", u32(static_cast<uint64_t>(c.head_dim)));
  writer.add_metadata(arch + "attention.layer_norm_rms_epsilon", f32(c.norm_eps));
  writer.add_metadata(arch + "rope.freq_base", f32(c.rope_theta));
  writer.add_metadata(arch + "rope.dimension_count", u32(static_cast<uint64_t>(c.head_dim)));
  writer.add_metadata(arch + "vocab_size", u32(static_cast<uint64_t>(c.vocab)));

  GgufValue::Array tokens, scores, types;
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    tokens.push_back(GgufValue::string(gguf_piece(tokenizer.piece(id))));
    scores.push_back(f32(tokenizer.score(id)));
    const int64_t type = tokenizer.kind(id) == TokenKind::Unknown ? 2 : tokenizer.kind(id) == TokenKind::Control ? 3
                         : tokenizer.kind(id) == TokenKind::Byte ? 6 : 1;
    types.push_back(GgufValue::signed_int(GgufValueType::Int32, type));
  }
  writer.add_metadata("tokenizer.ggml.model", GgufValue::string("llama"));
  writer.add_metadata("tokenizer.ggml.tokens", GgufValue::array(GgufValueType::String, std::move(tokens)));
  writer.add_metadata("tokenizer.ggml.scores", GgufValue::array(GgufValueType::Float32, std::move(scores)));
  writer.add_metadata("tokenizer.ggml.token_type", GgufValue::array(GgufValueType::Int32, std::move(types)));
  writer.add_metadata("tokenizer.ggml.bos_token_id", u32(1));
  writer.add_metadata("tokenizer.ggml.eos_token_id", u32(2));
  writer.add_metadata("tokenizer.ggml.unknown_token_id", u32(0));
  writer.add_metadata("tokenizer.ggml.add_bos_token", GgufValue::boolean(true));
  writer.add_metadata("tokenizer.ggml.add_eos_token", GgufValue::boolean(false));

  uint64_t stream = mix(options.seed);
  auto add_matrix = [&](const std::string& name, int64_t rows, int64_t cols, kernels::DType dtype) {
    const uint64_t tensor_seed = stream = mix(stream);
    writer.add_tensor(name, {cols, rows}, ggml_type_info(dtype).code, [=](std::byte* out, uint64_t) {
      std::vector<float> row(static_cast<size_t>(cols));
      uint64_t state = tensor_seed;
      const int64_t stride = kernels::row_bytes(dtype, cols);
      for (int64_t r = 0; r < rows; ++r) {
        for (auto& value : row) {
          state = mix(state);
          value = kWeightScale * (static_cast<float>(state >> 40) * 0x1.0p-23f - 1.0f);
        }
        kernels::quantize_row(dtype, row.data(), cols, out + r * stride);
      }
    });
  };
  auto add_norm = [&](const std::string& name) {
    writer.add_tensor(name, {c.dim}, ggml_type_info(kernels::DType::F32).code, [](std::byte* out, uint64_t bytes) {
      const float one = 1.0f;
      for (uint64_t i = 0; i < bytes; i += 4) std::memcpy(out + i, &one, 4);
    });
  };

  // The dtype of a matrix of `cols` columns; `favoured` marks the tensors Q4_K_M gives Q6_K.
  auto dtype_of = [&](int64_t cols, bool favoured) {
    if (!options.q4_k_m) return options.dtype;
    return k_quant_or_fallback(favoured ? kernels::DType::Q6_K : kernels::DType::Q4_K, cols);
  };
  auto add_bias = [&](const std::string& name, int64_t n) {
    const uint64_t bias_seed = stream = mix(stream);
    writer.add_tensor(name, {n}, ggml_type_info(kernels::DType::F32).code, [=](std::byte* out, uint64_t bytes) {
      uint64_t state = bias_seed;
      for (uint64_t i = 0; i < bytes; i += 4) {
        state = mix(state);
        const float value = kWeightScale * (static_cast<float>(state >> 40) * 0x1.0p-23f - 1.0f);
        std::memcpy(out + i, &value, 4);
      }
    });
  };

  const int64_t q_dim = c.heads * c.head_dim;
  add_matrix("token_embd.weight", c.vocab, c.dim, dtype_of(c.dim, c.tied_embeddings));
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string prefix = "blk." + std::to_string(l) + ".";
    const bool favoured = more_bits(l, c.layers);
    add_norm(prefix + "attn_norm.weight");
    add_matrix(prefix + "attn_q.weight", q_dim, c.dim, dtype_of(c.dim, false));
    add_matrix(prefix + "attn_k.weight", c.kv_dim(), c.dim, dtype_of(c.dim, false));
    add_matrix(prefix + "attn_v.weight", c.kv_dim(), c.dim, dtype_of(c.dim, favoured));
    if (c.attention_bias) {
      add_bias(prefix + "attn_q.bias", q_dim);
      add_bias(prefix + "attn_k.bias", c.kv_dim());
      add_bias(prefix + "attn_v.bias", c.kv_dim());
    }
    add_matrix(prefix + "attn_output.weight", c.dim, q_dim, dtype_of(q_dim, false));
    if (c.attention_output_bias) add_bias(prefix + "attn_output.bias", c.dim);
    add_norm(prefix + "ffn_norm.weight");
    add_matrix(prefix + "ffn_gate.weight", c.hidden_dim, c.dim, dtype_of(c.dim, false));
    add_matrix(prefix + "ffn_up.weight", c.hidden_dim, c.dim, dtype_of(c.dim, false));
    add_matrix(prefix + "ffn_down.weight", c.dim, c.hidden_dim, dtype_of(c.hidden_dim, favoured));
  }
  add_norm("output_norm.weight");
  if (!c.tied_embeddings) add_matrix("output.weight", c.vocab, c.dim, dtype_of(c.dim, true));
  writer.write(path);
}

}  // namespace snapstream::runtime
