// Masked decode attention against a naive evaluation over exactly the live slots plus the token,
// including sequences that claim only part of the capacity and slots scored with shifted queries,
// for caches stored in f32, f16 and Q8_0.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/decode_attention.h"
#include "kernels/kv_entries.h"

using namespace snapstream::kernels;

TEST_CASE("decode attention over a masked cache matches the naive formula", "[decode_attention]") {
  ThreadPool pool(2);
  const DType kv_dtype = GENERATE(DType::F32, DType::F16, DType::Q8_0);
  const AttentionShape shape = GENERATE(AttentionShape{4, 2, 8}, AttentionShape{2, 2, 16}, AttentionShape{6, 1, 4}, AttentionShape{8, 1, 64},
                                        AttentionShape{3, 3, 100}, AttentionShape{4, 2, 32});
  if (!kv_dtype_error(kv_dtype, shape.head_dim).empty()) return;  // Q8_0 heads come in blocks of 32
  const int64_t capacity = GENERATE(0, 1, 9, 70);
  const int64_t batch = 3;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::bernoulli_distribution coin(0.6);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng);
    return v;
  };
  const auto q = fill(static_cast<size_t>(batch * shape.q_width()));
  const auto shifted_q = fill(q.size());  // sequence 2 scores its first slots with these
  const auto self_k = fill(static_cast<size_t>(batch * shape.kv_width()));
  const auto self_v = fill(self_k.size());
  std::vector<std::vector<float>> keys, values;
  std::vector<std::vector<uint8_t>> live;
  std::vector<CacheView> caches;
  for (int64_t b = 0; b < batch; ++b) {
    keys.push_back(fill(static_cast<size_t>(shape.kv_heads * capacity * shape.head_dim)));
    values.push_back(fill(keys.back().size()));
    live.emplace_back(static_cast<size_t>(shape.kv_heads * capacity));
    for (auto& l : live.back()) l = coin(rng);
  }
  // Sequence 1 claims only the first half of its slots: the rest are empty and hold NaN, which
  // must never reach the output. Empty slots below the extent hold NaN too.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<int64_t> extents(static_cast<size_t>(batch), -1);
  extents[1] = capacity / 2;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t kv = 0; kv < shape.kv_heads; ++kv)
      for (int64_t s = 0; s < capacity; ++s) {
        auto& is_live = live[b][kv * capacity + s];
        if (extents[b] >= 0 && s >= extents[b]) is_live = 0;
        if (is_live) continue;
        std::fill_n(values[b].begin() + (kv * capacity + s) * shape.head_dim, shape.head_dim, nan);
        std::fill_n(keys[b].begin() + (kv * capacity + s) * shape.head_dim, shape.head_dim, nan);
      }
  std::vector<int64_t> shifted_ends = {0, 0, capacity / 3};
  // The cache as stored; an f16 or Q8_0 cache's values, widened back, are what the reference reads.
  // Quantising NaN has no meaning, so an empty Q8_0 row gets NaN scales and its integers 1.
  std::vector<std::vector<std::byte>> stored_keys, stored_values;
  const auto row_size = static_cast<size_t>(row_bytes(kv_dtype, shape.head_dim));
  auto store = [&](std::vector<float>& rows) {
    std::vector<std::byte> bytes(rows.size() / static_cast<size_t>(shape.head_dim) * row_size);
    for (size_t r = 0; r * shape.head_dim < rows.size(); ++r) {
      std::byte* row = bytes.data() + r * row_size;
      if (kv_dtype == DType::Q8_0 && std::isnan(rows[r * shape.head_dim])) {
        for (size_t block = 0; block < row_size; block += 34) {
          std::fill_n(row + block, 34, std::byte{1});
          const uint16_t nan_bits = 0x7E00;
          std::memcpy(row + block, &nan_bits, 2);
        }
        continue;
      }
      store_row(rows.data() + r * shape.head_dim, kv_dtype, shape.head_dim, row);
      load_row(row, kv_dtype, shape.head_dim, rows.data() + r * shape.head_dim);
    }
    return bytes;
  };
  for (int64_t b = 0; b < batch; ++b) {
    stored_keys.push_back(store(keys[b]));
    stored_values.push_back(store(values[b]));
    caches.push_back({stored_keys[b].data(), stored_values[b].data(), live[b].data(), extents[b],
                      shifted_ends[static_cast<size_t>(b)], kv_dtype});
  }
  std::vector<float> out(q.size());
  decode_attention(pool, batch, q.data(), shifted_q.data(), self_k.data(), self_v.data(), caches.data(), capacity, shape, out.data());

  const int64_t hd = shape.head_dim;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < shape.heads; ++h) {
      const int64_t kv = h / shape.group();
      std::vector<const float*> k_rows, v_rows, q_rows;
      for (int64_t s = 0; s < capacity; ++s)
        if (live[b][kv * capacity + s]) {
          k_rows.push_back(&keys[b][(kv * capacity + s) * hd]);
          v_rows.push_back(&values[b][(kv * capacity + s) * hd]);
          q_rows.push_back(&(s < shifted_ends[static_cast<size_t>(b)] ? shifted_q : q)[(b * shape.heads + h) * hd]);
        }
      k_rows.push_back(&self_k[(b * shape.kv_heads + kv) * hd]);
      v_rows.push_back(&self_v[(b * shape.kv_heads + kv) * hd]);
      q_rows.push_back(&q[(b * shape.heads + h) * hd]);
      std::vector<double> w(k_rows.size());
      double total = 0.0;
      for (size_t t = 0; t < k_rows.size(); ++t) {
        double dot = 0.0;
        for (int64_t d = 0; d < hd; ++d) dot += static_cast<double>(q_rows[t][d]) * k_rows[t][d];
        total += (w[t] = std::exp(dot / std::sqrt(static_cast<double>(hd))));
      }
      for (int64_t d = 0; d < hd; ++d) {
        double expected = 0.0;
        for (size_t t = 0; t < k_rows.size(); ++t) expected += w[t] / total * v_rows[t][d];
        REQUIRE(out[(b * shape.heads + h) * hd + d] == Approx(expected).margin(1e-5));
      }
    }
}
