// The integer dot products: every variant this CPU runs gives the portable variant's bits, the
// portable one matches a naive sum over dequantised weights and the activations' grid values, and
// a result does not depend on the band or the batch of rows it was computed with. Weights come from the encoder and from
// random bytes (extreme scales, -128 in Q8_0), which the encoder never writes.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/cpu/integer_dots.h"
#include "kernels/dequantize.h"
#include "kernels/quant_blocks.h"
#include "kernels/quantize.h"
#include "tests/kernels/integer_inputs.h"

using namespace snapstream::kernels;
using snapstream::test::random_values;
using snapstream::test::weight_row;
using snapstream::test::view;

TEST_CASE("integer dot products: every variant, the naive reference and any band or batch agree", "[integer_dots]") {
  const auto dtype = GENERATE(DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K);
  const int64_t blocks = GENERATE(1, 2, 3);
  const bool raw_bytes = GENERATE(false, true);
  // Rows a few bytes apart beyond their length, as a band of a wider matrix would be.
  const int64_t padding = GENERATE(0, 6);
  const BlockLayout layout = block_layout(dtype);
  const int64_t n = blocks * layout.elements;
  INFO(dtype_name(dtype) << ", " << blocks << " blocks, " << (raw_bytes ? "random bytes" : "encoded") << ", padding "
                         << padding);
  std::mt19937 rng(static_cast<uint32_t>(n) * 31 + (raw_bytes ? 7 : 0) + static_cast<uint32_t>(padding));

  // Two groups of sixteen weight rows and five more, against eleven activation rows.
  constexpr int64_t kWeightRows = 37, kRows = 11;
  const int64_t row_stride = blocks * layout.bytes + padding;
  std::vector<std::byte> w(static_cast<size_t>(kWeightRows * row_stride));
  std::vector<float> w_values(static_cast<size_t>(kWeightRows * n));
  for (int64_t r = 0; r < kWeightRows; ++r) {
    const auto row = weight_row(dtype, blocks, raw_bytes, rng);
    std::memcpy(w.data() + r * row_stride, row.data(), row.size());
    dequantize_span(dtype, row.data(), 0, n, w_values.data() + r * n);
  }

  // Activation rows of four kinds in turn: ordinary, large, all zero, and one value far above the rest.
  std::vector<std::vector<float>> x;
  for (int64_t j = 0; j < kRows; ++j) {
    const int64_t kind = j % 4;
    x.push_back(kind == 2 ? std::vector<float>(static_cast<size_t>(n), 0.0f)
                          : random_values(static_cast<size_t>(n), rng, kind == 0 ? 1.0f : kind == 1 ? 300.0f : 0.01f));
    if (kind == 3) x.back()[static_cast<size_t>(n / 2)] = 50.0f;
  }
  std::vector<QuantisedRow> rows(kRows);
  std::vector<cpu::QuantisedRowView> views;
  for (size_t j = 0; j < kRows; ++j) {
    quantise_activation_row(dtype, x[j].data(), n, rows[j]);
    views.push_back(view(rows[j]));
  }

  std::vector<float> portable(kRows * kWeightRows);
  cpu::integer_band_dots(cpu::kPortableIntegerDots, dtype)(w.data(), row_stride, kWeightRows, blocks, views.data(), kRows,
                                                           portable.data(), kWeightRows);
  for (int64_t j = 0; j < kRows; ++j) {
    std::vector<float> grid(static_cast<size_t>(n));
    round_activations(dtype, x[static_cast<size_t>(j)].data(), 1, n, grid.data());
    for (int64_t r = 0; r < kWeightRows; ++r) {
      double expected = 0.0, magnitude = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double product = static_cast<double>(w_values[static_cast<size_t>(r * n + i)]) * grid[static_cast<size_t>(i)];
        expected += product;
        magnitude += std::fabs(product);
      }
      INFO("activation row " << j << ", weight row " << r);
      CHECK(portable[static_cast<size_t>(j * kWeightRows + r)] == Approx(expected).margin(1e-5 * magnitude + 1e-7));
    }
  }

  for (const cpu::IntegerDotKernels* variant : cpu::runnable_integer_dot_kernels()) {
    INFO("variant " << variant->isa);
    const cpu::IntegerBandDots dots = cpu::integer_band_dots(*variant, dtype);
    std::vector<float> whole(kRows * kWeightRows);
    dots(w.data(), row_stride, kWeightRows, blocks, views.data(), kRows, whole.data(), kWeightRows);
    CHECK(whole == portable);
    // Any band of weight rows with any run of activation rows gives the same bits: the first and
    // last rows of a band change how rows are grouped, the activation rows how they are tiled.
    // Runs start at the first activation row and end at the last, so a run of one meets an
    // ordinary row as well as the all-zero one.
    for (const auto& [first, last] : {std::pair<int64_t, int64_t>{3, 37}, {0, 16}, {16, 35}, {5, 6}})
      for (const int64_t m : {int64_t{1}, int64_t{2}, int64_t{9}})
        for (const int64_t start : {int64_t{0}, kRows - m}) {
          INFO("weight rows " << first << " to " << last << ", activation rows " << start << " to " << start + m - 1);
          std::vector<float> part(static_cast<size_t>(m * kWeightRows), -1.0f);
          dots(w.data() + first * row_stride, row_stride, last - first, blocks, views.data() + start, m, part.data() + first,
               kWeightRows);
          for (int64_t j = 0; j < m; ++j)
            for (int64_t r = first; r < last; ++r)
              REQUIRE(part[static_cast<size_t>(j * kWeightRows + r)] == portable[static_cast<size_t>((start + j) * kWeightRows + r)]);
        }
  }
}

TEST_CASE("the largest weights against the largest activations overflow no partial sum in any variant", "[integer_dots]") {
  // Kernels keep pair sums in 16 bits before widening them (and the AVX2 K-quant groups add
  // several quads' pairs first), which only values at the edge of each type's range can overflow.
  const auto dtype = GENERATE(DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K);
  const std::byte fill = dtype == DType::Q8_0                         ? std::byte{0x80}
                         : dtype == DType::Q4_0 || dtype == DType::Q5_0 ? std::byte{0x00}
                                                                        : std::byte{0xFF};
  constexpr int64_t blocks = 2, kWeightRows = 16;
  const BlockLayout layout = block_layout(dtype);
  const int64_t n = blocks * layout.elements;
  INFO(dtype_name(dtype));
  std::mt19937 rng(11);
  std::vector<std::byte> w;
  for (int64_t r = 0; r < kWeightRows; ++r) {
    const auto row = snapstream::test::filled_weight_row(dtype, blocks, fill, rng);
    w.insert(w.end(), row.begin(), row.end());
  }
  // Every value at full scale: all positive, all negative, alternating, and twice more so that
  // groups taken against four or more activation rows run too.
  std::vector<QuantisedRow> rows(5);
  std::vector<cpu::QuantisedRowView> views;
  for (size_t j = 0; j < rows.size(); ++j) {
    std::vector<float> x(static_cast<size_t>(n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = j % 3 == 0 ? 1.0f : j % 3 == 1 ? -1.0f : (i % 2 == 0 ? 1.0f : -1.0f);
    quantise_activation_row(dtype, x.data(), n, rows[j]);
    views.push_back(view(rows[j]));
  }
  const auto m = static_cast<int64_t>(rows.size());
  std::vector<float> portable(static_cast<size_t>(m * kWeightRows));
  cpu::integer_band_dots(cpu::kPortableIntegerDots, dtype)(w.data(), layout.bytes * blocks, kWeightRows, blocks, views.data(), m,
                                                           portable.data(), kWeightRows);
  for (const cpu::IntegerDotKernels* variant : cpu::runnable_integer_dot_kernels()) {
    INFO("variant " << variant->isa);
    for (const int64_t first : {int64_t{0}, m - 1}) {  // all rows, then the last one alone
      std::vector<float> y(static_cast<size_t>((m - first) * kWeightRows));
      cpu::integer_band_dots(*variant, dtype)(w.data(), layout.bytes * blocks, kWeightRows, blocks, views.data() + first,
                                              m - first, y.data(), kWeightRows);
      CHECK(std::equal(y.begin(), y.end(), portable.begin() + first * kWeightRows));
    }
  }
}

TEST_CASE("the chosen integer variant is one the CPU runs, and float types have none", "[integer_dots]") {
  const auto runnable = cpu::runnable_integer_dot_kernels();
  REQUIRE(runnable.front() == &cpu::kPortableIntegerDots);
  CHECK(&cpu::integer_dot_kernels() == runnable.back());
  CHECK_FALSE(cpu::has_integer_dot(DType::F32));
  CHECK_FALSE(cpu::has_integer_dot(DType::BF16));
  CHECK(cpu::integer_band_dots(cpu::kPortableIntegerDots, DType::F16) == nullptr);
  CHECK(cpu::has_integer_dot(DType::Q5_K));
}
