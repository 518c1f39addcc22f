// RoPE in f32 as the reference implementations compute it: each pair's angle is the previous
// pair's times theta^(-2/head_dim), so the products round as they do there.
#include "kernels/rope.h"

#include <cmath>
#include <vector>

#include "kernels/errors.h"

namespace snapstream::kernels {
namespace {
void check_head_dim(int64_t head_dim) {
  require(head_dim > 0 && head_dim % 2 == 0, "rope", "head_dim must be positive and even");
}
}  // namespace

void rope_turns(int64_t head_dim, int64_t position, const RopeSpec& spec, float* turns) {
  require(turns != nullptr, "rope", "null buffer");
  check_head_dim(head_dim);
  const float step = std::pow(spec.theta, -2.0f / static_cast<float>(head_dim));
  float undivided = static_cast<float>(position);
  for (int64_t i = 0; i < head_dim / 2; ++i, undivided *= step) {
    const float angle = spec.divisors != nullptr ? undivided / spec.divisors[i] : undivided;
    turns[2 * i] = std::cos(angle);
    turns[2 * i + 1] = std::sin(angle);
  }
}

void rope_by_turns(float* x, int64_t heads, int64_t head_dim, RopePairs pairs, const float* turns) {
  require(x != nullptr && turns != nullptr, "rope", "null buffer");
  require(heads > 0, "rope", "no heads");
  check_head_dim(head_dim);
  const int64_t half = head_dim / 2;
  // One loop per pairing, each without a branch inside, so the compiler vectorises both.
  if (pairs == RopePairs::Adjacent) {
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + h * head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float c = turns[2 * i], s = turns[2 * i + 1], a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * c - b * s;
        v[2 * i + 1] = a * s + b * c;
      }
    }
    return;
  }
  // The second element of pair i half a head after the first.
  for (int64_t h = 0; h < heads; ++h) {
    float* first = x + h * head_dim;
    float* second = first + half;
    for (int64_t i = 0; i < half; ++i) {
      const float c = turns[2 * i], s = turns[2 * i + 1], a = first[i], b = second[i];
      first[i] = a * c - b * s;
      second[i] = a * s + b * c;
    }
  }
}

void rope(float* x, int64_t heads, int64_t head_dim, int64_t position, const RopeSpec& spec) {
  check_head_dim(head_dim);  // before it sizes the buffer
  thread_local std::vector<float> turns;
  turns.resize(static_cast<size_t>(head_dim));
  rope_turns(head_dim, position, spec, turns.data());
  rope_by_turns(x, heads, head_dim, spec.pairs, turns.data());
}

}  // namespace snapstream::kernels
