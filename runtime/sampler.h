// Picks the next token from logits: greedy, or seeded sampling with temperature, top-k and top-p.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace snapstream::runtime {

struct SamplingParams {
  float temperature = 0.0f;  // 0 means greedy (argmax)
  int64_t top_k = 0;         // 0 means no top-k cut
  float top_p = 1.0f;        // 1 means no nucleus cut
  uint64_t seed = 0;

  // Throws InvalidRequestError for negative, non-finite or out-of-range values.
  void validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);

  // May reorder nothing in `logits`; uses its own scratch.
  int32_t sample(std::span<const float> logits);

 private:
  double next_uniform();  // [0, 1), from a fixed generator so seeds give the same tokens everywhere

  SamplingParams params_;
  uint64_t state_;
  std::vector<std::pair<float, int32_t>> candidates_;
};

}  // namespace snapstream::runtime
