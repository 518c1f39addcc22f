// Rotary position embedding of each head's pairs: adjacent pairs (x[2i], x[2i+1]) as Llama
// stores its heads, or halves (x[i], x[i + d/2]) as GPT-NeoX and Qwen2 do.
#pragma once

#include <cstdint>

namespace snapstream::kernels {

enum class RopePairs : uint8_t { Adjacent, Halves };

struct RopeSpec {
  float theta = 10000.0f;
  RopePairs pairs = RopePairs::Adjacent;
  // head_dim / 2 divisors of each pair's frequency, or null: Llama 3.x bakes its long-context
  // frequency scaling into these (rope_freqs.weight).
  const float* divisors = nullptr;
};

// Rotates `heads` vectors of head_dim floats stored back to back, all at one position.
// Pair i turns by position * theta^(-2i/head_dim) / divisors[i]. A negative position turns
// back: rotations compose, so rope(rope(x, a), -b) is x at position a - b (up to rounding).
void rope(float* x, int64_t heads, int64_t head_dim, int64_t position, const RopeSpec& spec);

// rope in two halves, for callers that turn many vectors by the same position (every layer's
// queries and keys of one token): rope_turns writes each pair's cosine and sine at `position`
// (turns[2i], turns[2i + 1], head_dim floats in all), and rope_by_turns applies them, with the
// bits rope gives.
void rope_turns(int64_t head_dim, int64_t position, const RopeSpec& spec, float* turns);
void rope_by_turns(float* x, int64_t heads, int64_t head_dim, RopePairs pairs, const float* turns);

}  // namespace snapstream::kernels
