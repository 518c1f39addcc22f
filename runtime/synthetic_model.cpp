// The synthetic model writer. Each tensor draws from its own seeded stream, so a file is
// the same for the same seed whatever order tensors are written in.
#include "runtime/synthetic_model.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "graph/errors.h"
#include "kernels/quantize.h"
#include "runtime/errors.h"
#include "runtime/gguf_model_layout.h"
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

// A K-quant for rows of `cols`, or llama.cpp's fallback when the row is not whole 256-blocks.
kernels::DType k_quant_or_fallback(kernels::DType wanted, int64_t cols) {
  if (kernels::row_length_supported(wanted, cols)) return wanted;
  return wanted == kernels::DType::Q6_K ? kernels::DType::Q8_0 : kernels::DType::Q5_0;
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
  constexpr uint32_t kMostlyQ4KM = 15;  // llama.cpp's general.file_type for the Q4_K_M mix
  add_shape_metadata(writer, c, c.name + " (random weights)", options.q4_k_m ? kMostlyQ4KM : gguf_file_type(options.dtype));
  add_sentence_piece_metadata(writer, tokenizer);

  // Each tensor draws from its own stream: uniform values for matrices and biases, ones for norms.
  uint64_t stream = mix(options.seed);
  for_each_tensor_slot(c, [&](const TensorSlot& slot) {
    const bool norm = slot.role == TensorRole::AttentionNorm || slot.role == TensorRole::MlpNorm || slot.role == TensorRole::FinalNorm;
    const uint64_t tensor_seed = norm ? 0 : (stream = mix(stream));
    // The dtype of a matrix; the Q4_K_M mix gives its favoured tensors Q6_K.
    const kernels::DType dtype = !slot.matrix ? kernels::DType::F32
                                 : !options.q4_k_m
                                     ? options.dtype
                                     : k_quant_or_fallback(slot.favoured ? kernels::DType::Q6_K : kernels::DType::Q4_K, slot.cols);
    const std::vector<int64_t> dims = slot.matrix ? std::vector<int64_t>{slot.cols, slot.rows} : std::vector<int64_t>{slot.cols};
    writer.add_tensor(slot.name, dims, ggml_type_info(dtype).code, [=](std::byte* out, uint64_t) {
      std::vector<float> row(static_cast<size_t>(slot.cols), 1.0f);
      uint64_t state = tensor_seed;
      const int64_t stride = kernels::row_bytes(dtype, slot.cols);
      for (int64_t r = 0; r < slot.rows; ++r) {
        for (auto& value : row) {
          if (norm) break;
          state = mix(state);
          value = kWeightScale * (static_cast<float>(state >> 40) * 0x1.0p-23f - 1.0f);
        }
        kernels::quantize_row(dtype, row.data(), slot.cols, out + r * stride);
      }
    });
  });
  writer.write(path);
}

}  // namespace snapstream::runtime
