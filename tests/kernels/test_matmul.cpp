// matmul against a naive triple loop over the dequantised weights, for every dtype and for
// the decode (one row), small-batch and GEMM (many rows) paths.
#include <catch2/catch.hpp>
#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/dot.h"
#include "kernels/dequantize.h"
#include "kernels/errors.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"

using namespace snapstream::kernels;

namespace {
std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// A random [rows][cols] matrix stored in `dtype`, and its decoded values for the reference.
struct StoredMatrix {
  std::vector<std::byte> packed;
  std::vector<float> expanded;
  WeightView view;
};
StoredMatrix stored_matrix(DType dtype, int64_t rows, int64_t cols, uint32_t seed) {
  StoredMatrix m;
  const auto dense = random_values(static_cast<size_t>(rows * cols), seed);
  m.packed.resize(static_cast<size_t>(rows * row_bytes(dtype, cols)));
  for (int64_t r = 0; r < rows; ++r) quantize_row(dtype, dense.data() + r * cols, cols, m.packed.data() + r * row_bytes(dtype, cols));
  m.view = WeightView{dtype, m.packed.data(), rows, cols};
  m.expanded.resize(static_cast<size_t>(rows * cols));
  dequantize_rows(m.view, 0, rows, m.expanded.data());
  return m;
}
}  // namespace

TEST_CASE("matmul matches a naive reference for every dtype and batch size", "[matmul]") {
  ThreadPool pool(2);
  const auto dtype = GENERATE(DType::F32, DType::F16, DType::BF16, DType::Q8_0);
  const int64_t cols = GENERATE(64, 96, 160);
  const int64_t rows = GENERATE(1, 7, 130);
  const int64_t m = GENERATE(1, 3, 9, 70);
  INFO("dtype " << dtype_name(dtype) << " rows " << rows << " cols " << cols << " m " << m);

  const StoredMatrix stored = stored_matrix(dtype, rows, cols, 1);
  const WeightView& w = stored.view;
  const std::vector<float>& expanded = stored.expanded;

  const auto exact_x = random_values(static_cast<size_t>(m * cols), 2);
  std::vector<float> y(static_cast<size_t>(m * rows), -99.0f);
  matmul(pool, exact_x.data(), m, w, y.data());
  // The reference multiplies the activations as the kernel sees them (rounded for Q8_0).
  std::vector<float> x(exact_x.size());
  round_activations(dtype, exact_x.data(), m, cols, x.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t r = 0; r < rows; ++r) {
      double expected = 0.0;
      for (int64_t k = 0; k < cols; ++k) expected += static_cast<double>(x[i * cols + k]) * expanded[r * cols + k];
      REQUIRE(y[i * rows + r] == Approx(expected).margin(1e-4));
    }
}

TEST_CASE("matmul of block-quantised rows and column slices matches a naive reference", "[matmul]") {
  ThreadPool pool(2);
  const auto dtype = GENERATE(DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K);
  const int64_t m = GENERATE(1, 5, 9);
  const auto path = GENERATE(MatmulPath::Auto, MatmulPath::RowDots);
  const int64_t rows = 37, cols = 768;
  const StoredMatrix stored = stored_matrix(dtype, rows, cols, 5);
  const WeightView& whole = stored.view;
  const std::vector<float>& expanded = stored.expanded;
  // A tensor-parallel shard's slice may start and end inside a 256-value super-block.
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 768}, {0, 384}, {384, 768}, {128, 256}, {96, 700}}) {
    INFO("dtype " << dtype_name(dtype) << " m " << m << " columns " << begin << ".." << end);
    const WeightView w = whole.column_slice(begin, end);
    const int64_t k = end - begin;
    const auto exact_x = random_values(static_cast<size_t>(m * k), 6);
    std::vector<float> y(static_cast<size_t>(m * rows), -99.0f);
    matmul(pool, exact_x.data(), m, w, y.data(), path);
    std::vector<float> x(exact_x.size());
    round_activations(dtype, exact_x.data(), m, k, x.data());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t r = 0; r < rows; ++r) {
        double expected = 0.0;
        for (int64_t c = 0; c < k; ++c) expected += static_cast<double>(x[i * k + c]) * expanded[r * cols + begin + c];
        REQUIRE(y[i * rows + r] == Approx(expected).margin(1e-4));
      }
    if (path == MatmulPath::RowDots) {
      // Batching is invisible: each row alone gives the same bits.
      for (int64_t i = 0; i < m; ++i) {
        std::vector<float> alone(static_cast<size_t>(rows));
        matmul(pool, exact_x.data() + i * k, 1, w, alone.data(), path);
        for (int64_t r = 0; r < rows; ++r) REQUIRE(alone[r] == y[i * rows + r]);
      }
    }
  }
}

TEST_CASE("f32 matmul handles row lengths that are not a multiple of the SIMD width", "[matmul]") {
  ThreadPool pool(2);
  const int64_t cols = GENERATE(1, 7, 67, 172);
  const int64_t rows = 5;
  const auto w_values = random_values(static_cast<size_t>(rows * cols), 3);
  const auto x = random_values(static_cast<size_t>(cols), 4);
  std::vector<float> y(rows);
  matmul(pool, x.data(), 1, WeightView{DType::F32, reinterpret_cast<const std::byte*>(w_values.data()), rows, cols}, y.data());
  for (int64_t r = 0; r < rows; ++r) {
    double expected = 0.0;
    for (int64_t k = 0; k < cols; ++k) expected += static_cast<double>(x[k]) * w_values[r * cols + k];
    REQUIRE(y[r] == Approx(expected).margin(1e-5));
  }
}

TEST_CASE("matmul rejects shapes that break its contract", "[matmul]") {
  ThreadPool pool(1);
  std::vector<std::byte> bytes(1024);
  std::vector<float> x(64), y(64);
  CHECK_THROWS_AS(matmul(pool, x.data(), 1, WeightView{DType::Q8_0, bytes.data(), 1, 48}, y.data()), KernelArgumentError);
  CHECK_THROWS_AS(matmul(pool, x.data(), 0, WeightView{DType::F32, bytes.data(), 1, 8}, y.data()), KernelArgumentError);
  CHECK_THROWS_AS(matmul(pool, nullptr, 1, WeightView{DType::F32, bytes.data(), 1, 8}, y.data()), KernelArgumentError);
}

TEST_CASE("a dot-product tile equals single dot products bit for bit", "[matmul]") {
  const int64_t n = GENERATE(1, 4, 8, 31, 32, 67, 172, 768);
  const int rows = GENERATE(1, 3, 4);
  const int m = GENERATE(1, 2, 3, 4);
  const auto w = random_values(static_cast<size_t>(4 * n), 5);
  const auto xs = random_values(static_cast<size_t>(4 * n), 6);
  const float* x[4] = {xs.data(), xs.data() + n, xs.data() + 2 * n, xs.data() + 3 * n};
  float out[16];
  cpu::dot_f32_tile(w.data(), n, rows, x, m, n, out, 4, nullptr);
  for (int j = 0; j < m; ++j)
    for (int r = 0; r < rows; ++r) CHECK(out[j * 4 + r] == cpu::dot_f32(w.data() + r * n, x[j], n));
}

TEST_CASE("an f16 or bf16 row against several vectors equals single dot products bit for bit", "[matmul]") {
  const DType dtype = GENERATE(DType::F16, DType::BF16);
  const int64_t n = GENERATE(1, 8, 13, 16, 24, 67, 768);
  const int m = GENERATE(1, 2, 3, 4);
  std::vector<uint16_t> row(static_cast<size_t>(n));
  const auto values = random_values(row.size(), 11);
  for (size_t i = 0; i < row.size(); ++i) row[i] = dtype == DType::F16 ? f32_to_f16(values[i]) : static_cast<uint16_t>(std::bit_cast<uint32_t>(values[i]) >> 16);
  const auto xs = random_values(static_cast<size_t>(4 * n), 12);
  const float* x[4] = {xs.data(), xs.data() + n, xs.data() + 2 * n, xs.data() + 3 * n};
  float out[8];
  cpu::dot_16bit_tile(dtype, row.data(), x, m, n, out, 2);
  for (int j = 0; j < m; ++j)
    CHECK(out[2 * j] == (dtype == DType::F16 ? cpu::dot_f16(row.data(), x[j], n) : cpu::dot_bf16(row.data(), x[j], n)));
}

TEST_CASE("eight rows against one vector equal single dot products bit for bit", "[matmul]") {
  const int64_t n = GENERATE(1, 8, 13, 32, 64, 67, 128);
  const int64_t stride = n + 5;  // rows need not be packed
  const auto rows = random_values(static_cast<size_t>(8 * stride), 7);
  const auto x = random_values(static_cast<size_t>(n), 8);
  float out[8];
  cpu::dot_f32_rows8(rows.data(), stride, x.data(), n, out);
  for (int s = 0; s < 8; ++s) CHECK(out[s] == cpu::dot_f32(rows.data() + s * stride, x.data(), n));
}

TEST_CASE("eight f16 rows give what the same rows widened to f32 give, bit for bit", "[matmul]") {
  const int64_t n = GENERATE(1, 8, 13, 64, 67);
  const int64_t stride = n + 3;
  const auto values = random_values(static_cast<size_t>(8 * stride), 9);
  const auto x = random_values(static_cast<size_t>(n), 10);
  std::vector<uint16_t> half(values.size());
  std::vector<float> widened(values.size());
  for (size_t i = 0; i < values.size(); ++i) widened[i] = f16_to_f32(half[i] = f32_to_f16(values[i]));
  float from_half[8], from_widened[8];
  cpu::dot_f16_rows8(half.data(), stride, x.data(), n, from_half);
  cpu::dot_f32_rows8(widened.data(), stride, x.data(), n, from_widened);
  for (int s = 0; s < 8; ++s) CHECK(from_half[s] == from_widened[s]);
}

TEST_CASE("row-dot matmul gives each row the same result whatever the batch", "[matmul]") {
  ThreadPool pool(2);
  const int64_t rows = 37, cols = 100;
  const auto w = random_values(static_cast<size_t>(rows * cols), 7);
  const auto x = random_values(static_cast<size_t>(9 * cols), 8);
  const WeightView view{DType::F32, reinterpret_cast<const std::byte*>(w.data()), rows, cols};
  std::vector<float> batched(static_cast<size_t>(9 * rows)), single(static_cast<size_t>(rows));
  matmul(pool, x.data(), 9, view, batched.data(), MatmulPath::RowDots);
  for (int64_t i = 0; i < 9; ++i) {
    matmul(pool, x.data() + i * cols, 1, view, single.data(), MatmulPath::RowDots);
    CHECK(std::equal(single.begin(), single.end(), batched.begin() + i * rows));
  }
}

TEST_CASE("a matmul group gives each matrix the bits it gets alone", "[matmul]") {
  ThreadPool pool(2);
  const int64_t cols = 512, m = 11;
  const auto x = random_values(static_cast<size_t>(m * cols), 21);
  // One grid (Q8_0 and Q5_0; Q4_K and Q6_K), two grids (falls back to one matmul each), floats.
  const std::vector<std::vector<DType>> groups = {{DType::Q8_0, DType::Q5_0, DType::Q8_0},
                                                  {DType::Q4_K, DType::Q6_K},
                                                  {DType::Q8_0, DType::Q4_K},
                                                  {DType::F32, DType::F16}};
  for (const auto& dtypes : groups) {
    std::vector<StoredMatrix> matrices;
    std::vector<WeightView> views;
    std::vector<std::vector<float>> grouped, alone;
    for (size_t k = 0; k < dtypes.size(); ++k) {
      // Row counts that split unevenly over the threads, so a share ends inside a matrix.
      matrices.push_back(stored_matrix(dtypes[k], 29 + 16 * static_cast<int64_t>(k), cols, 30 + static_cast<uint32_t>(k)));
      views.push_back(matrices.back().view);
      grouped.emplace_back(static_cast<size_t>(m * views.back().rows));
      alone.emplace_back(grouped.back().size());
    }
    std::vector<float*> outputs;
    for (auto& y : grouped) outputs.push_back(y.data());
    for (const MatmulPath path : {MatmulPath::RowDots, MatmulPath::Auto}) {
      matmul_group(pool, x.data(), m, views, outputs, path);
      for (size_t k = 0; k < views.size(); ++k) {
        INFO(dtype_name(dtypes[k]) << " in a group of " << dtypes.size());
        matmul(pool, x.data(), m, views[k], alone[k].data(), path);
        CHECK(grouped[k] == alone[k]);
      }
    }
  }
  std::vector<float> y(static_cast<size_t>(m * 4));
  const std::vector<WeightView> none;
  const std::vector<float*> one_output{y.data()};
  CHECK_THROWS_AS(matmul_group(pool, x.data(), m, none, one_output), KernelArgumentError);
}
