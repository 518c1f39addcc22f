// SnapKV selection on a hand-worked example (GQA aggregation, pooling, ties, gather), and
// the score kernel against a naive double-precision evaluation on random inputs.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/kv_entries.h"
#include "kernels/snapkv.h"

using namespace snapstream::kernels;

namespace {
// Two query heads share one KV head (head_dim 2). Head 0's query (a, 0) and head 1's (0, a),
// with a = sqrt(2)·ln 3, make a matching key's weight e^{ln 3} = 3 against 1 for any other.
// Keys (1,0) at positions 2, 5, 6 attract head 0; key (0,1) at position 8 attracts head 1.
constexpr int64_t kLength = 12;
const AttentionShape kShape{2, 1, 2};

std::vector<float> hand_keys() {
  std::vector<float> keys(kLength * 2, 0.0f);
  for (int p : {2, 5, 6}) keys[p * 2] = 1.0f;
  keys[8 * 2 + 1] = 1.0f;
  return keys;
}

std::vector<float> hand_window() {  // queries at positions 10 and 11, identical
  const float a = std::sqrt(2.0f) * std::log(3.0f);
  return {a, 0, 0, a, a, 0, 0, a};
}
}  // namespace

TEST_CASE("SnapKV scores of the hand-worked example", "[snapkv]") {
  ThreadPool pool(2);
  const auto keys = hand_keys();
  const auto window = hand_window();
  std::vector<float> scores(kLength);
  snapkv_scores(pool, window.data(), 2, 10, keys.data(), kLength, kShape, scores.data());
  // Query at 10 sees 11 keys: head 0 weights 3/17 (hot) and 1/17; head 1 3/13 and 1/13.
  // Query at 11 sees 12 keys: head 0 3/18 and 1/18; head 1 3/14 and 1/14.
  const double hot0 = 3.0 / 17 + 3.0 / 18 + 1.0 / 13 + 1.0 / 14;
  const double hot1 = 1.0 / 17 + 1.0 / 18 + 3.0 / 13 + 3.0 / 14;
  const double other = 1.0 / 17 + 1.0 / 18 + 1.0 / 13 + 1.0 / 14;
  const double last = 1.0 / 18 + 1.0 / 14;
  for (int p : {2, 5, 6}) CHECK(scores[p] == Approx(hot0).margin(1e-6));
  CHECK(scores[8] == Approx(hot1).margin(1e-6));
  for (int p : {0, 1, 3, 4, 7, 9, 10}) CHECK(scores[p] == Approx(other).margin(1e-6));
  CHECK(scores[11] == Approx(last).margin(1e-6));
  double total = 0.0;
  for (float s : scores) total += s;
  CHECK(total == Approx(4.0).margin(1e-5));  // two queries times two heads, each a distribution
}

TEST_CASE("pooling, top-K with ties and the gather of the hand-worked example", "[snapkv]") {
  ThreadPool pool(1);
  const auto keys = hand_keys();
  const auto window = hand_window();
  std::vector<float> scores(kLength), pooled(kLength, -1.0f);
  snapkv_scores(pool, window.data(), 2, 10, keys.data(), kLength, kShape, scores.data());
  // Sink 2 and ring 2 leave candidates [2, 10).
  pool_scores(scores.data(), 1, kLength, 2, 10, 3, PoolKind::Max, pooled.data());
  const float hot0 = scores[2], hot1 = scores[8];
  const std::vector<float> expected_max = {hot0, hot0, hot0, hot0, hot0, hot1, hot1, hot1};
  for (int j = 2; j < 10; ++j) CHECK(pooled[j] == expected_max[j - 2]);
  CHECK(pooled[0] == -1.0f);  // outside the candidates: untouched

  std::vector<int32_t> chosen(4);
  select_top_k(pooled.data(), 1, kLength, 2, 10, 3, chosen.data());
  CHECK(std::vector<int32_t>(chosen.begin(), chosen.begin() + 3) == std::vector<int32_t>{7, 8, 9});
  select_top_k(pooled.data(), 1, kLength, 2, 10, 4, chosen.data());  // the 4th is a tie of five: earliest wins
  CHECK(chosen == std::vector<int32_t>{2, 7, 8, 9});

  // Without smoothing: 8 first, then the tie 2, 5, 6 resolves to the earlier positions.
  pool_scores(scores.data(), 1, kLength, 2, 10, 1, PoolKind::Max, pooled.data());
  select_top_k(pooled.data(), 1, kLength, 2, 10, 3, chosen.data());
  CHECK(std::vector<int32_t>(chosen.begin(), chosen.begin() + 3) == std::vector<int32_t>{2, 5, 8});

  pool_scores(scores.data(), 1, kLength, 2, 10, 3, PoolKind::Avg, pooled.data());
  CHECK(pooled[2] == Approx((scores[2] + scores[3]) / 2.0));  // only two positions inside the range
  CHECK(pooled[8] == Approx((scores[7] + scores[8] + scores[9]) / 3.0));

  // The chosen keys land in the compressed slots [2, 5) of a 7-slot cache, in position order.
  const int32_t picked[3] = {2, 5, 8};
  std::vector<float> cache(7 * 2, -9.0f);
  const KvRows rows{DType::F32, reinterpret_cast<std::byte*>(cache.data())};
  gather_positions(keys.data(), kLength, 1, 2, 0, picked, 3, 7, 2, rows);
  CHECK(std::vector<float>(cache.begin() + 4, cache.begin() + 10) == std::vector<float>{1, 0, 1, 0, 0, 1});
  CHECK(cache[0] == -9.0f);
  CHECK_THROWS_AS(gather_positions(keys.data(), kLength, 1, 2, 0, picked, 3, 7, 5, rows), KernelArgumentError);
  // An f16 cache holds the same rows at half the bytes (these values are exact in f16).
  std::vector<uint16_t> half(7 * 2, 0);
  gather_positions(keys.data(), kLength, 1, 2, 0, picked, 3, 7, 2, {DType::F16, reinterpret_cast<std::byte*>(half.data())});
  std::vector<float> widened(6);
  load_row(reinterpret_cast<const std::byte*>(half.data() + 4), DType::F16, 6, widened.data());
  CHECK(widened == std::vector<float>{1, 0, 1, 0, 0, 1});
  CHECK_THROWS_AS(gather_positions(keys.data(), kLength, 1, 2, 0, picked, 3, 7, 2, {DType::Q8_0, rows.data}),
                  KernelArgumentError);
}

TEST_CASE("SnapKV scores match a naive evaluation with GQA", "[snapkv]") {
  ThreadPool pool(2);
  const AttentionShape shape{6, 2, 8};
  const int64_t length = 40, window = 5, start = length - window;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> keys(static_cast<size_t>(length * shape.kv_width())), q(static_cast<size_t>(window * shape.q_width()));
  for (auto& x : keys) x = normal(rng);
  for (auto& x : q) x = normal(rng);
  std::vector<float> scores(static_cast<size_t>(shape.kv_heads * length));
  snapkv_scores(pool, q.data(), window, start, keys.data(), length, shape, scores.data());
  for (int64_t kv = 0; kv < shape.kv_heads; ++kv) {
    std::vector<double> expected(static_cast<size_t>(length), 0.0);
    for (int64_t i = 0; i < window; ++i)
      for (int64_t h = kv * 3; h < kv * 3 + 3; ++h) {
        std::vector<double> w(static_cast<size_t>(start + i + 1));
        double total = 0.0;
        for (int64_t j = 0; j <= start + i; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < 8; ++d) dot += static_cast<double>(q[i * shape.q_width() + h * 8 + d]) * keys[j * shape.kv_width() + kv * 8 + d];
          total += (w[static_cast<size_t>(j)] = std::exp(dot / std::sqrt(8.0)));
        }
        for (int64_t j = 0; j <= start + i; ++j) expected[static_cast<size_t>(j)] += w[static_cast<size_t>(j)] / total;
      }
    for (int64_t j = 0; j < length; ++j) REQUIRE(scores[kv * length + j] == Approx(expected[static_cast<size_t>(j)]).margin(1e-5));
  }
}
