// Causal attention with GQA against a direct double-precision evaluation of the formula.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/attention.h"

using namespace snapstream::kernels;

TEST_CASE("causal attention matches the naive formula, prefill and decode", "[attention]") {
  ThreadPool pool(2);
  const AttentionShape shape = GENERATE(AttentionShape{4, 2, 8}, AttentionShape{3, 3, 16}, AttentionShape{8, 1, 4});
  const int64_t first_position = GENERATE(0, 5);
  const int64_t m = GENERATE(1, 6);
  const int64_t positions = first_position + m;
  const int64_t q_stride = shape.heads * shape.head_dim, kv_stride = shape.kv_heads * shape.head_dim;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> q(static_cast<size_t>(m * q_stride)), keys(static_cast<size_t>(positions * kv_stride)),
      values(keys.size()), out(q.size());
  for (auto* v : {&q, &keys, &values})
    for (auto& x : *v) x = dist(rng);

  causal_attention(pool, q.data(), m, first_position, keys.data(), values.data(), shape, out.data());

  const int64_t group = shape.heads / shape.kv_heads;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const int64_t kv = h / group, visible = first_position + i + 1;
      std::vector<double> weights(static_cast<size_t>(visible));
      double max_score = -1e300, total = 0.0;
      for (int64_t t = 0; t < visible; ++t) {
        double s = 0.0;
        for (int64_t d = 0; d < shape.head_dim; ++d)
          s += static_cast<double>(q[i * q_stride + h * shape.head_dim + d]) * keys[t * kv_stride + kv * shape.head_dim + d];
        weights[static_cast<size_t>(t)] = s / std::sqrt(static_cast<double>(shape.head_dim));
        max_score = std::max(max_score, weights[static_cast<size_t>(t)]);
      }
      for (auto& w : weights) total += (w = std::exp(w - max_score));
      for (int64_t d = 0; d < shape.head_dim; ++d) {
        double expected = 0.0;
        for (int64_t t = 0; t < visible; ++t)
          expected += weights[static_cast<size_t>(t)] / total * values[t * kv_stride + kv * shape.head_dim + d];
        REQUIRE(out[i * q_stride + h * shape.head_dim + d] == Approx(expected).margin(1e-5));
      }
    }
}
