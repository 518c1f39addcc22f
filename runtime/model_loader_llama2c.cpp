// llama2.c legacy (v0) checkpoints and their tokenizer files. The header's sizes decide the
// exact file length, which is checked before any weight is touched.
#include <cstring>

#include "graph/errors.h"
#include "runtime/byte_reader.h"
#include "runtime/errors.h"
#include "runtime/model_loaders.h"

namespace snapstream::runtime {
namespace {
constexpr int64_t kHeaderBytes = 7 * 4;
constexpr uint64_t kMaxPieceLength = 1 << 16;

kernels::WeightView f32_matrix(const float*& cursor, int64_t rows, int64_t cols) {
  kernels::WeightView view{kernels::DType::F32, reinterpret_cast<const std::byte*>(cursor), rows, cols};
  cursor += rows * cols;
  return view;
}
}  // namespace

Tokenizer load_llama2c_tokenizer(const std::string& path, int64_t vocab_size) {
  MappedFile file(path);
  ByteReader in(file.bytes(), path);
  const auto max_length = in.read<int32_t>("max token length");
  if (max_length <= 0 || static_cast<uint64_t>(max_length) > kMaxPieceLength)
    in.fail("max token length " + std::to_string(max_length) + " is not plausible; is this a llama2.c tokenizer file?");
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<TokenKind> kinds;
  for (int64_t i = 0; i < vocab_size; ++i) {
    scores.push_back(in.read<float>("token score"));
    const auto length = in.read<int32_t>("token length");
    if (length < 0 || length > max_length)
      in.fail("token " + std::to_string(i) + " has length " + std::to_string(length) + " (max " + std::to_string(max_length) + ")");
    const auto bytes = in.read_bytes(static_cast<uint64_t>(length), "token text");
    pieces.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  if (in.remaining() != 0)
    in.fail("has " + std::to_string(in.remaining()) + " bytes after " + std::to_string(vocab_size) +
            " tokens; it does not match the model's vocabulary");
  // llama2.c fixes <unk>=0, <s>=1, </s>=2 and byte tokens at 3 + byte.
  for (int64_t i = 0; i < vocab_size; ++i) {
    TokenKind kind = TokenKind::Normal;
    if (i == 0) kind = TokenKind::Unknown;
    else if (i <= 2) kind = TokenKind::Control;
    else if (pieces[static_cast<size_t>(i)].size() == 6 && pieces[static_cast<size_t>(i)].starts_with("<0x")) kind = TokenKind::Byte;
    kinds.push_back(kind);
  }
  if (vocab_size < 3) throw ModelFileError(path, "vocabulary of " + std::to_string(vocab_size) + " tokens is too small");
  return Tokenizer(std::move(pieces), std::move(scores), std::move(kinds), 1, 2, 0);
}

std::unique_ptr<Model> load_llama2c_model(std::shared_ptr<const MappedFile> file, const std::string& tokenizer_path) {
  const std::string& path = file->path();
  ByteReader in(file->bytes(), path);
  int32_t header[7];
  for (auto& field : header) field = in.read<int32_t>("llama2.c header");
  auto model = std::make_unique<Model>();
  graph::ModelShape& c = model->shape;
  c.name = "llama2.c";
  c.dim = header[0];
  c.hidden_dim = header[1];
  c.layers = header[2];
  c.heads = header[3];
  c.kv_heads = header[4];
  c.tied_embeddings = header[5] > 0;
  c.vocab = header[5] < 0 ? -static_cast<int64_t>(header[5]) : header[5];
  c.context_length = header[6];
  try {
    c.finalise();
  } catch (const graph::ShapeError& e) {
    throw ModelFileError(path, std::string("not a GGUF file, and not a valid llama2.c checkpoint: ") + e.what());
  }

  const int64_t d = c.dim, h = c.hidden_dim, l = c.layers, kv = c.kv_dim();
  // Sizes are bounded by finalise(), so these products stay far below 2^63.
  const int64_t floats = c.vocab * d + l * d + l * d * d + 2 * l * kv * d + l * d * d + l * d + 3 * l * h * d + d +
                         c.context_length * c.head_dim + (c.tied_embeddings ? 0 : c.vocab * d);
  const int64_t expected = kHeaderBytes + floats * 4;
  if (static_cast<int64_t>(file->size()) != expected)
    throw ModelFileError(path, "size " + std::to_string(file->size()) + " bytes does not match the " + std::to_string(expected) +
                                   " bytes its llama2.c header implies; the file is truncated or not a llama2.c checkpoint");

  const auto* cursor = reinterpret_cast<const float*>(file->bytes().data() + kHeaderBytes);
  ModelWeights& w = model->weights;
  w.token_embedding = f32_matrix(cursor, c.vocab, d);
  w.layers.resize(static_cast<size_t>(l));
  // The file stores each weight for all layers before the next weight.
  auto norms = [&](const float* LayerWeights::*norm) {
    for (auto& layer : w.layers) {
      layer.*norm = cursor;
      cursor += d;
    }
  };
  auto matrices = [&](kernels::WeightView LayerWeights::*matrix, int64_t rows, int64_t cols) {
    for (auto& layer : w.layers) layer.*matrix = f32_matrix(cursor, rows, cols);
  };
  norms(&LayerWeights::attention_norm);
  matrices(&LayerWeights::wq, d, d);
  matrices(&LayerWeights::wk, kv, d);
  matrices(&LayerWeights::wv, kv, d);
  matrices(&LayerWeights::wo, d, d);
  norms(&LayerWeights::mlp_norm);
  matrices(&LayerWeights::w_gate, h, d);
  matrices(&LayerWeights::w_down, d, h);
  matrices(&LayerWeights::w_up, h, d);
  w.final_norm = cursor;
  cursor += d;
  cursor += c.context_length * c.head_dim;  // legacy RoPE tables, recomputed instead
  w.output = c.tied_embeddings ? w.token_embedding : f32_matrix(cursor, c.vocab, d);

  model->tokenizer = load_llama2c_tokenizer(tokenizer_path, c.vocab);
  model->path = path;
  model->format = "llama2.c";
  model->mapping = std::move(file);
  return model;
}

}  // namespace snapstream::runtime
