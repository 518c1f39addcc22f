// The integer dot products: every variant this CPU runs gives the portable variant's bits, the
// portable one matches a naive sum over dequantised weights and the activations' grid values, and
// a row's result does not depend on the tile it shares. Weights come from the encoder and from
// random bytes (extreme scales, -128 in Q8_0), which the encoder never writes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/integer_dots.h"
#include "kernels/dequantize.h"
#include "kernels/quant_blocks.h"
#include "kernels/quantize.h"

using namespace snapstream::kernels;

namespace {

std::vector<float> random_values(size_t n, std::mt19937& rng, float spread) {
  std::uniform_real_distribution<float> dist(-spread, spread);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// A weight row of `blocks` blocks: encoded from random values, or random bytes with finite scales.
std::vector<std::byte> weight_row(DType dtype, int64_t blocks, bool raw_bytes, std::mt19937& rng) {
  const BlockLayout layout = block_layout(dtype);
  std::vector<std::byte> row(static_cast<size_t>(blocks * layout.bytes));
  if (!raw_bytes) {
    const auto values = random_values(static_cast<size_t>(blocks * layout.elements), rng, 1.0f);
    quantize_row(dtype, values.data(), blocks * layout.elements, row.data());
    return row;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : row) b = static_cast<std::byte>(byte(rng));
  // f16 scales within ±2 (random bytes could be infinities or NaNs).
  std::uniform_real_distribution<float> scale(-2.0f, 2.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    std::byte* block = row.data() + b * layout.bytes;
    std::vector<size_t> scale_offsets = {0};
    if (dtype == DType::Q4_K || dtype == DType::Q5_K) scale_offsets = {0, 2};
    if (dtype == DType::Q6_K) scale_offsets = {208};
    for (size_t offset : scale_offsets) {
      const uint16_t bits = f32_to_f16(scale(rng));
      std::memcpy(block + offset, &bits, 2);
    }
  }
  return row;
}

cpu::QuantisedRowView view(const QuantisedRow& row) {
  return {row.q.data(), row.scales.data(), row.sums16.data(), row.biased.data(), row.paired_scales.data()};
}

}  // namespace

TEST_CASE("integer dot products: every variant, the naive reference and tiles agree", "[integer_dots]") {
  const auto dtype = GENERATE(DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K);
  const int64_t blocks = GENERATE(1, 2, 3);
  const bool raw_bytes = GENERATE(false, true);
  const int64_t n = blocks * block_layout(dtype).elements;
  INFO(dtype_name(dtype) << ", " << blocks << " blocks, " << (raw_bytes ? "random bytes" : "encoded"));
  std::mt19937 rng(static_cast<uint32_t>(n) * 31 + (raw_bytes ? 7 : 0));

  const auto w = weight_row(dtype, blocks, raw_bytes, rng);
  std::vector<float> w_values(static_cast<size_t>(n));
  dequantize_span(dtype, w.data(), 0, n, w_values.data());

  // A full tile of activation rows, four kinds in turn: ordinary, large, all zero, and one value
  // far above the rest.
  constexpr int kRows = cpu::kIntegerTileRows;
  std::vector<std::vector<float>> x;
  for (int j = 0; j < kRows; ++j) {
    const int kind = j % 4;
    x.push_back(kind == 2 ? std::vector<float>(static_cast<size_t>(n), 0.0f)
                          : random_values(n, rng, kind == 0 ? 1.0f : kind == 1 ? 300.0f : 0.01f));
    if (kind == 3) x.back()[static_cast<size_t>(n / 2)] = 50.0f;
  }
  std::vector<QuantisedRow> rows(kRows);
  std::vector<cpu::QuantisedRowView> views;
  for (size_t j = 0; j < kRows; ++j) {
    quantise_activation_row(dtype, x[j].data(), n, rows[j]);
    views.push_back(view(rows[j]));
  }

  float portable[kRows];
  cpu::integer_row_dots(cpu::kPortableIntegerDots, dtype)(w.data(), blocks, views.data(), kRows, portable, 1);
  for (size_t j = 0; j < kRows; ++j) {
    std::vector<float> grid(static_cast<size_t>(n));
    round_activations(dtype, x[j].data(), 1, n, grid.data());
    double expected = 0.0, magnitude = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      expected += static_cast<double>(w_values[i]) * grid[i];
      magnitude += std::fabs(static_cast<double>(w_values[i]) * grid[i]);
    }
    INFO("row " << j);
    CHECK(portable[j] == Approx(expected).margin(1e-5 * magnitude + 1e-7));
  }

  for (const cpu::IntegerDotKernels* variant : cpu::runnable_integer_dot_kernels()) {
    INFO("variant " << variant->isa);
    const cpu::IntegerRowDots dots = cpu::integer_row_dots(*variant, dtype);
    float tiled[kRows];
    dots(w.data(), blocks, views.data(), kRows, tiled, 1);
    for (int m = 1; m < kRows; ++m) {
      float partial[kRows];
      dots(w.data(), blocks, views.data() + (kRows - m), m, partial, 1);
      for (int j = 0; j < m; ++j) CHECK(partial[j] == tiled[kRows - m + j]);
    }
    for (size_t j = 0; j < kRows; ++j) CHECK(tiled[j] == portable[j]);
  }
}

TEST_CASE("the chosen integer variant is one the CPU runs, and float types have none", "[integer_dots]") {
  const auto runnable = cpu::runnable_integer_dot_kernels();
  REQUIRE(runnable.front() == &cpu::kPortableIntegerDots);
  CHECK(&cpu::integer_dot_kernels() == runnable.back());
  CHECK_FALSE(cpu::has_integer_dot(DType::F32));
  CHECK_FALSE(cpu::has_integer_dot(DType::BF16));
  CHECK(cpu::integer_row_dots(cpu::kPortableIntegerDots, DType::F16) == nullptr);
  CHECK(cpu::has_integer_dot(DType::Q5_K));
}
