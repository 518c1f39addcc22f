// Picks the next token from logits: greedy, or seeded sampling with temperature, top-k, top-p and
// min-p, after OpenAI's logit bias, the repetition penalty and OpenAI's frequency and presence
// penalties.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace snapstream::runtime {

struct SamplingParams {
  float temperature = 0.0f;  // 0 means greedy (argmax)
  int64_t top_k = 0;         // 0 means no top-k cut
  float top_p = 1.0f;        // 1 means no nucleus cut
  // 0 means no cut; else tokens less likely than min_p times the likeliest one (after the
  // temperature) are dropped, as vLLM's and llama.cpp's min_p.
  float min_p = 0.0f;
  uint64_t seed = 0;
  // Subtracted from a token's logit: frequency_penalty times the times this sampler returned
  // it, presence_penalty once it has returned it at all (OpenAI's definition; the prompt's own
  // tokens are not counted, as in vLLM).
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  // Every token of the prompt or returned so far has a positive logit divided by this and a
  // negative one multiplied by it (the CTRL penalty over the whole sequence, as vLLM applies
  // it); 1 means none.
  float repetition_penalty = 1.0f;
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to those tokens' logits

  // Throws InvalidRequestError for negative, non-finite or out-of-range values.
  void validate() const;
};

// The seed of sample `choice` of several drawn for one request (OpenAI's n): choice 0 keeps
// `seed`, so one sample is the same with or without n; the others are hashed apart, because the
// generator's states one step apart give the same draws shifted by one.
uint64_t choice_seed(uint64_t seed, int64_t choice);

class Sampler {
 public:
  // `prompt` matters only to the repetition penalty.
  explicit Sampler(const SamplingParams& params, std::span<const int32_t> prompt = {});

  // May reorder nothing in `logits`; uses its own scratch. Throws InvalidRequestError when a
  // logit bias names a token beyond `logits`.
  int32_t sample(std::span<const float> logits);

 private:
  double next_uniform();  // [0, 1), from a fixed generator so seeds give the same tokens everywhere
  // `logits` with the bias and penalties applied, in adjusted_; `logits` itself when there are none.
  std::span<const float> adjusted(std::span<const float> logits);
  int32_t pick(std::span<const float> logits);

  SamplingParams params_;
  uint64_t state_;
  std::vector<std::pair<float, int32_t>> candidates_;
  std::vector<float> adjusted_;
  std::unordered_map<int32_t, int64_t> returned_;  // token -> times returned, when penalised
  std::unordered_set<int32_t> repeated_;           // prompt and returned tokens, under a repetition penalty
};

}  // namespace snapstream::runtime
