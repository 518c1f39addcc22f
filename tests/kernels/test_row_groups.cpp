// Q4_K and Q8_0 rows regrouped sixteen at a time: every variant that reads row groups gives the
// bits the portable band kernel gives on the rows as stored, for any run of groups and activation
// rows, and matmul on a regrouped matrix gives the bits it gives on the original, batched or not.
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/errors.h"
#include "kernels/matmul.h"
#include "kernels/row_groups.h"
#include "tests/kernels/integer_inputs.h"

using namespace snapstream::kernels;
using snapstream::test::random_values;
using snapstream::test::view;
using snapstream::test::weight_row;

namespace {

std::vector<std::byte> weight_rows(DType dtype, int64_t rows, int64_t blocks, bool raw_bytes, std::mt19937& rng) {
  std::vector<std::byte> w;
  for (int64_t r = 0; r < rows; ++r) {
    const auto row = weight_row(dtype, blocks, raw_bytes, rng);
    w.insert(w.end(), row.begin(), row.end());
  }
  return w;
}

bool groups_read_here(DType dtype) { return cpu::integer_group_dots(cpu::integer_dot_kernels(), dtype) != nullptr; }

// Calls check(group_dots, grouped) for every variant this CPU runs that reads `dtype` in row
// groups, with w's rows (rows x cols) regrouped into `grouped`; warns when there is none.
template <typename Check>
void for_each_group_variant(DType dtype, const std::vector<std::byte>& w, int64_t rows, int64_t cols, Check check) {
  bool any = false;
  for (const cpu::IntegerDotKernels* variant : cpu::runnable_integer_dot_kernels()) {
    const cpu::IntegerGroupDots group_dots = cpu::integer_group_dots(*variant, dtype);
    if (group_dots == nullptr) continue;
    any = true;
    INFO("variant " << variant->isa);
    std::vector<std::byte> grouped(w.size());
    REQUIRE(write_row_groups(WeightView{dtype, w.data(), rows, cols}, grouped.data()).layout == WeightLayout::RowGroups);
    check(group_dots, grouped.data());
  }
  if (!any) WARN("no integer variant on this CPU reads row groups; nothing to compare");
}

}  // namespace

TEST_CASE("row-group dot products give the band kernels' bits for any run of groups and rows", "[row_groups]") {
  const DType dtype = GENERATE(DType::Q4_K, DType::Q8_0);
  // Nine Q4_K blocks: rows that wide come sixteen to a chunk, so 40 rows take three.
  const int64_t blocks = GENERATE(1, 2, 3, 9);
  const bool raw_bytes = GENERATE(false, true);
  INFO(dtype_name(dtype) << ", " << blocks << " blocks, " << (raw_bytes ? "random bytes" : "encoded"));
  std::mt19937 rng(static_cast<uint32_t>(blocks) * 17 + (raw_bytes ? 5 : 0));
  constexpr int64_t kWeightRows = 48, kRows = 40;
  const int64_t n = block_layout(dtype).elements * blocks, row_stride = block_layout(dtype).bytes * blocks;
  const auto w = weight_rows(dtype, kWeightRows, blocks, raw_bytes, rng);
  // Activation rows: ordinary, large, all zero, and one value far above the rest, in turn.
  std::vector<QuantisedRow> rows(kRows);
  std::vector<cpu::QuantisedRowView> views;
  for (int64_t j = 0; j < kRows; ++j) {
    const int64_t kind = j % 4;
    auto x = kind == 2 ? std::vector<float>(static_cast<size_t>(n), 0.0f)
                       : random_values(static_cast<size_t>(n), rng, kind == 0 ? 1.0f : kind == 1 ? 300.0f : 0.01f);
    if (kind == 3) x[static_cast<size_t>(n / 2)] = 50.0f;
    quantise_activation_row(dtype, x.data(), n, rows[static_cast<size_t>(j)]);
    views.push_back(view(rows[static_cast<size_t>(j)]));
  }
  std::vector<float> expected(kRows * kWeightRows);
  cpu::integer_band_dots(cpu::kPortableIntegerDots, dtype)(w.data(), row_stride, kWeightRows, blocks, views.data(), kRows,
                                                           expected.data(), kWeightRows);

  for_each_group_variant(dtype, w, kWeightRows, n, [&](cpu::IntegerGroupDots group_dots, const std::byte* grouped) {
    // Runs of groups with runs of activation rows: how many share a pass changes the tiling.
    for (const auto& [first, last] : {std::pair<int64_t, int64_t>{0, 3}, {1, 3}, {2, 3}})
      for (const int64_t m : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{11}, int64_t{17}, int64_t{40}}) {
        INFO("groups " << first << " to " << last << ", the last " << m << " activation rows");
        std::vector<float> part(static_cast<size_t>(m * kWeightRows), -1.0f);
        group_dots(grouped + first * 16 * row_stride, last - first, blocks, views.data() + (kRows - m), m,
                   part.data() + 16 * first, kWeightRows);
        for (int64_t j = 0; j < m; ++j)
          for (int64_t r = 16 * first; r < 16 * last; ++r)
            REQUIRE(part[static_cast<size_t>(j * kWeightRows + r)] ==
                    expected[static_cast<size_t>((kRows - m + j) * kWeightRows + r)]);
      }
  });
}

TEST_CASE("row-group dot products stay exact at the largest sums a block can hold", "[row_groups]") {
  // Q4_K: every nibble 15 and every 6-bit scale and min 63 (all bytes 0xFF, finite f16 scales).
  // Q8_0: every value -128 (bytes 0x80), the far end of dpbusd's unsigned operand once biased.
  // Against activations all at the same end of the 8-bit range or at both ends: the sums the
  // kernels keep in narrow lanes before scaling are as large as they can be.
  const DType dtype = GENERATE(DType::Q4_K, DType::Q8_0);
  INFO(dtype_name(dtype));
  const BlockLayout block = block_layout(dtype);
  constexpr int64_t kWeightRows = 32, kBlocks = 2;
  const int64_t n = block.elements * kBlocks, row_stride = block.bytes * kBlocks;
  std::vector<std::byte> w(static_cast<size_t>(kWeightRows * row_stride), dtype == DType::Q4_K ? std::byte{0xFF} : std::byte{0x80});
  for (int64_t r = 0; r < kWeightRows; ++r)
    for (int64_t b = 0; b < kBlocks; ++b)
      for (const size_t offset : dtype == DType::Q4_K ? std::vector<size_t>{0, 2} : std::vector<size_t>{0}) {
        const uint16_t bits = f32_to_f16(r % 2 == 0 ? 1.0f : -0.5f);
        std::memcpy(w.data() + r * row_stride + b * block.bytes + offset, &bits, 2);
      }
  // Four rows, so kernels that let two groups share a pass of four rows do so here too.
  std::vector<QuantisedRow> rows(4);
  std::vector<cpu::QuantisedRowView> views;
  for (size_t j = 0; j < rows.size(); ++j) {
    // All -127; all +127 but the first value (the extreme maps to -127); alternating ends, twice.
    std::vector<float> x(static_cast<size_t>(n), j == 0 ? -1.0f : 1.0f);
    x[0] = -1.0f;
    if (j >= 2)
      for (size_t i = j - 1; i < x.size(); i += 2) x[i] = -1.0f;
    quantise_activation_row(dtype, x.data(), n, rows[j]);
    views.push_back(view(rows[j]));
  }
  const auto m = static_cast<int64_t>(rows.size());
  std::vector<float> expected(static_cast<size_t>(m * kWeightRows));
  cpu::integer_band_dots(cpu::kPortableIntegerDots, dtype)(w.data(), row_stride, kWeightRows, kBlocks, views.data(), m,
                                                           expected.data(), kWeightRows);
  for_each_group_variant(dtype, w, kWeightRows, n, [&](cpu::IntegerGroupDots group_dots, const std::byte* grouped) {
    std::vector<float> got(expected.size(), -1.0f);
    group_dots(grouped, kWeightRows / 16, kBlocks, views.data(), m, got.data(), kWeightRows);
    CHECK(got == expected);
  });
}

TEST_CASE("matmul on regrouped Q4_K and Q8_0 weights gives the bits of the rows as stored", "[row_groups]") {
  const DType dtype = GENERATE(DType::Q4_K, DType::Q8_0);
  INFO(dtype_name(dtype));
  if (!groups_read_here(dtype)) {
    WARN("this CPU's integer kernels read no row groups");
    return;
  }
  std::mt19937 rng(23);
  const int64_t blocks = 512 / block_layout(dtype).elements;
  constexpr int64_t kCols = 512, kRowsA = 64, kRowsB = 32;
  const auto a = weight_rows(dtype, kRowsA, blocks, false, rng), b = weight_rows(dtype, kRowsB, blocks, true, rng);
  std::vector<std::byte> a_grouped(a.size()), b_grouped(b.size());
  const WeightView a_rows{dtype, a.data(), kRowsA, kCols}, b_rows{dtype, b.data(), kRowsB, kCols};
  const WeightView a_groups = write_row_groups(a_rows, a_grouped.data());
  const WeightView b_groups = write_row_groups(b_rows, b_grouped.data());
  ThreadPool pool(2);
  for (const int64_t m : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{40}}) {
    INFO(m << " activation rows");
    const auto x = random_values(static_cast<size_t>(m * kCols), rng, 2.0f);
    std::vector<float> want(static_cast<size_t>(m * kRowsA)), got(want.size());
    matmul(pool, x.data(), m, a_rows, want.data());
    matmul(pool, x.data(), m, a_groups, got.data());
    CHECK(got == want);
    // In a group with a matrix of rows, and behind one of eight rows (its groups would straddle
    // the threads' shares, so each matrix goes alone): the bits stay.
    const auto c = weight_rows(dtype, 8, blocks, false, rng);
    const WeightView c_rows{dtype, c.data(), 8, kCols};
    for (const auto& [first, second] : {std::pair{b_rows, a_groups}, {c_rows, b_groups}}) {
      std::vector<float> first_y(static_cast<size_t>(m * first.rows)), second_y(static_cast<size_t>(m * second.rows));
      const WeightView ws[2] = {first, second};
      float* const ys[2] = {first_y.data(), second_y.data()};
      matmul_group(pool, x.data(), m, ws, ys);
      std::vector<float> second_alone(second_y.size());
      WeightView second_as_rows = second.data == a_grouped.data() ? a_rows : b_rows;
      matmul(pool, x.data(), m, second_as_rows, second_alone.data());
      CHECK(second_y == second_alone);
    }
  }
}

TEST_CASE("only packed Q4_K and Q8_0 matrices of whole groups are regrouped, and matmul refuses other groups", "[row_groups]") {
  std::mt19937 rng(5);
  const auto w = weight_rows(DType::Q4_K, 40, 1, false, rng);
  std::vector<std::byte> out(w.size());
  const WeightView ragged{DType::Q4_K, w.data(), 40, 256};
  CHECK_FALSE(row_groups_supported(ragged));
  CHECK_THROWS_AS(write_row_groups(ragged, out.data()), KernelArgumentError);
  // Q4_0 rows of 256 values take 144 bytes, as Q4_K ones do: only the type is refused.
  CHECK_FALSE(row_groups_supported(WeightView{DType::Q4_0, w.data(), 32, 256}));
  CHECK(row_groups_supported(WeightView{DType::Q8_0, w.data(), 32, 128}) == groups_read_here(DType::Q8_0));
  CHECK_FALSE(row_groups_supported(ragged.row_slice(0, 32).column_slice(0, 128)));
  CHECK(row_groups_supported(ragged.row_slice(0, 32)) == groups_read_here(DType::Q4_K));

  ThreadPool pool(1);
  std::vector<float> x(256, 1.0f), y(40);
  WeightView wrong{DType::Q4_0, w.data(), 32, 256};
  wrong.layout = WeightLayout::RowGroups;
  CHECK_THROWS_AS(matmul(pool, x.data(), 1, wrong, y.data()), KernelArgumentError);
  WeightView ragged_groups = ragged;
  ragged_groups.layout = WeightLayout::RowGroups;
  CHECK_THROWS_AS(matmul(pool, x.data(), 1, ragged_groups, y.data()), KernelArgumentError);
}
