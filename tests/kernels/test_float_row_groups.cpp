// f32 and f16 rows regrouped sixteen at a time: matmul on them matches a naive reference for any
// shape (rows that leave a padded last group, odd row lengths), never writes past its rows, and
// gives bits that depend on the weight row and activation row only.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/float_group_dots.h"
#include "kernels/dtype.h"
#include "kernels/matmul.h"
#include "kernels/row_groups.h"
#include "tests/kernels/integer_inputs.h"

using namespace snapstream::kernels;
using snapstream::test::random_values;

namespace {

// A rows x cols matrix stored as `dtype` (f32 or f16), and the f32 values it holds.
struct FloatMatrix {
  std::vector<std::byte> bytes;
  std::vector<float> values;
};

FloatMatrix float_matrix(DType dtype, int64_t rows, int64_t cols, std::mt19937& rng) {
  FloatMatrix m;
  m.values = random_values(static_cast<size_t>(rows * cols), rng, 1.0f);
  m.bytes.resize(static_cast<size_t>(rows * row_bytes(dtype, cols)));
  for (size_t i = 0; i < m.values.size(); ++i) {
    if (dtype == DType::F16) {
      const uint16_t bits = f32_to_f16(m.values[i]);
      m.values[i] = f16_to_f32(bits);
      std::memcpy(m.bytes.data() + 2 * i, &bits, 2);
    } else {
      std::memcpy(m.bytes.data() + 4 * i, &m.values[i], 4);
    }
  }
  return m;
}

bool groups_read_here(DType dtype) {
  if (cpu::float_group_dots(dtype) != nullptr) return true;
  WARN("this CPU reads no " << dtype_name(dtype) << " row groups");
  return false;
}

}  // namespace

TEST_CASE("matmul on regrouped f32 and f16 rows matches a naive reference", "[row_groups]") {
  const DType dtype = GENERATE(DType::F32, DType::F16);
  const int64_t rows = GENERATE(1, 15, 16, 37, 50);
  const int64_t cols = GENERATE(1, 7, 64, 67);
  if (!groups_read_here(dtype)) return;
  std::mt19937 rng(static_cast<uint32_t>(rows * 131 + cols));
  const FloatMatrix w = float_matrix(dtype, rows, cols, rng);
  const WeightView as_rows{dtype, w.bytes.data(), rows, cols};
  REQUIRE(row_groups_supported(as_rows));
  std::vector<std::byte> grouped(static_cast<size_t>(row_groups_bytes(as_rows)));
  const WeightView groups = write_row_groups(as_rows, grouped.data());
  REQUIRE(groups.layout == WeightLayout::RowGroups);
  ThreadPool pool(2);
  for (const int64_t m : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{9}, int64_t{20}}) {
    INFO(dtype_name(dtype) << " " << rows << " x " << cols << ", " << m << " activation rows");
    const auto x = random_values(static_cast<size_t>(m * cols), rng, 2.0f);
    // Sentinels after the last row show a padded group's lanes are never stored.
    std::vector<float> y(static_cast<size_t>(m * rows + 5), -7.0f);
    matmul(pool, x.data(), m, groups, y.data());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t r = 0; r < rows; ++r) {
        double expected = 0.0, magnitude = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
          const double term = static_cast<double>(x[i * cols + c]) * w.values[r * cols + c];
          expected += term;
          magnitude += std::fabs(term);
        }
        // A chain of `cols` fused multiply-adds in f32 errs by at most about cols * 2^-24 of the
        // terms' magnitudes; this allows sixteen times that.
        const double bound = 1e-6 * static_cast<double>(cols) * magnitude + 1e-30;
        REQUIRE(std::fabs(y[i * rows + r] - expected) <= bound);
      }
    for (size_t k = static_cast<size_t>(m * rows); k < y.size(); ++k) REQUIRE(y[k] == -7.0f);
  }
}

TEST_CASE("f32 and f16 row-group sums depend only on their weight row and activation row", "[row_groups]") {
  const DType dtype = GENERATE(DType::F32, DType::F16);
  if (!groups_read_here(dtype)) return;
  std::mt19937 rng(41);
  constexpr int64_t kRows = 83, kCols = 150, kM = 21;
  const FloatMatrix w = float_matrix(dtype, kRows, kCols, rng);
  const WeightView as_rows{dtype, w.bytes.data(), kRows, kCols};
  std::vector<std::byte> grouped(static_cast<size_t>(row_groups_bytes(as_rows)));
  const WeightView groups = write_row_groups(as_rows, grouped.data());
  const auto x = random_values(static_cast<size_t>(kM * kCols), rng, 1.0f);
  ThreadPool pool(2);
  std::vector<float> batched(static_cast<size_t>(kM * kRows));
  matmul(pool, x.data(), kM, groups, batched.data());

  SECTION("each activation row alone, and any run of them, gives the batch's bits") {
    for (int64_t i = 0; i < kM; ++i) {
      std::vector<float> alone(static_cast<size_t>(kRows));
      matmul(pool, x.data() + i * kCols, 1, groups, alone.data());
      for (int64_t r = 0; r < kRows; ++r) REQUIRE(alone[r] == batched[i * kRows + r]);
    }
    std::vector<float> run(static_cast<size_t>(5 * kRows));
    matmul(pool, x.data() + 9 * kCols, 5, groups, run.data());
    for (int64_t k = 0; k < 5 * kRows; ++k) REQUIRE(run[k] == batched[9 * kRows + k]);
  }
  SECTION("any run of groups, on one thread or two, gives the batch's bits") {
    const cpu::FloatGroupDots group_dots = cpu::float_group_dots(dtype);
    for (const auto& [first, last] : {std::pair<int64_t, int64_t>{0, 1}, {1, 4}, {2, 6}, {4, 6}}) {
      const int64_t begin = 16 * first, end = std::min(kRows, 16 * last);
      std::vector<float> part(static_cast<size_t>(kM * kRows), 0.0f);
      group_dots(groups.row(begin), end - begin, kCols, x.data(), kM, part.data() + begin, kRows);
      for (int64_t i = 0; i < kM; ++i)
        for (int64_t r = begin; r < end; ++r) REQUIRE(part[i * kRows + r] == batched[i * kRows + r]);
    }
    ThreadPool one(1);
    std::vector<float> single(batched.size());
    matmul(one, x.data(), kM, groups, single.data());
    CHECK(single == batched);
  }
  SECTION("an f16 matrix gives the bits of its f32 widening") {
    if (dtype != DType::F16 || !groups_read_here(DType::F32)) return;
    const WeightView widened{DType::F32, reinterpret_cast<const std::byte*>(w.values.data()), kRows, kCols};
    std::vector<std::byte> widened_grouped(static_cast<size_t>(row_groups_bytes(widened)));
    std::vector<float> y(batched.size());
    matmul(pool, x.data(), kM, write_row_groups(widened, widened_grouped.data()), y.data());
    CHECK(y == batched);
  }
}

TEST_CASE("only packed f32 and f16 matrices are regrouped, into whole groups", "[row_groups]") {
  if (!groups_read_here(DType::F32)) return;
  std::vector<float> values(37 * 64, 0.5f);
  const WeightView w{DType::F32, reinterpret_cast<const std::byte*>(values.data()), 37, 64};
  CHECK(row_groups_bytes(w) == 48 * 64 * 4);
  CHECK(row_groups_bytes(WeightView{DType::F16, w.data, 37, 64}) == 48 * 64 * 2);
  CHECK(row_groups_bytes(WeightView{DType::Q8_0, w.data, 32, 64}) == 32 * 2 * 34);
  CHECK(row_groups_supported(w));
  CHECK(row_groups_supported(w.row_slice(16, 37)));
  CHECK_FALSE(row_groups_supported(w.column_slice(0, 32)));
  CHECK_FALSE(row_groups_supported(WeightView{DType::BF16, w.data, 37, 64}));
  std::vector<std::byte> out(static_cast<size_t>(row_groups_bytes(w)));
  const WeightView grouped = write_row_groups(w, out.data());
  CHECK_FALSE(row_groups_supported(grouped));  // already regrouped
}
