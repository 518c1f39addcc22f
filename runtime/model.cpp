// Format detection for load_model() and the byte accounting of a model's weights.
#include "runtime/model.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "runtime/errors.h"
#include "runtime/gguf_file.h"
#include "runtime/model_loaders.h"

namespace snapstream::runtime {

namespace {
// The sum of `measure` over the matrices a token's decode step multiplies: every layer's and the output head.
template <typename Measure>
int64_t over_decode_matrices(const ModelWeights& weights, Measure measure) {
  int64_t total = measure(weights.output);
  for (const auto& layer : weights.layers)
    for (const auto* w : {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.w_gate, &layer.w_up, &layer.w_down})
      total += measure(*w);
  return total;
}
}  // namespace

int64_t ModelWeights::bytes_read_per_token() const {
  return over_decode_matrices(*this, [](const kernels::WeightView& w) { return w.total_bytes(); });
}

int64_t ModelWeights::multiply_adds_per_token() const {
  return over_decode_matrices(*this, [](const kernels::WeightView& w) { return w.rows * w.cols; });
}

std::unique_ptr<Model> load_model(const std::string& path, const std::string& tokenizer_path) {
  auto file = std::make_shared<const MappedFile>(path);
  if (has_gguf_magic(*file)) {
    if (!tokenizer_path.empty())
      throw ModelFileError(tokenizer_path, "a GGUF model carries its own tokenizer; drop --tokenizer");
    return load_gguf_model(std::move(file));
  }
  std::string tokenizer = tokenizer_path;
  if (tokenizer.empty()) {
    // llama2.c keeps the vocabulary in a separate file, usually named after its size.
    const auto dir = std::filesystem::path(path).parent_path();
    int32_t vocab = 0;
    if (file->size() >= 24) std::memcpy(&vocab, file->bytes().data() + 20, 4);
    // A negative size marks an unshared output head; widened first, as -INT32_MIN overflows.
    const int64_t vocab_size = std::abs(static_cast<int64_t>(vocab));
    for (const auto& name : {"tok" + std::to_string(vocab_size) + ".bin", std::string("tokenizer.bin")}) {
      if (std::filesystem::exists(dir / name)) {
        tokenizer = (dir / name).string();
        break;
      }
    }
    if (tokenizer.empty())
      throw ModelFileError(path, "not a GGUF file, so read as a llama2.c checkpoint, which needs its tokenizer: pass --tokenizer FILE");
  }
  return load_llama2c_model(std::move(file), tokenizer);
}

}  // namespace snapstream::runtime
