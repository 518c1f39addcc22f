// The value side of attention: weighted_row_sums against a double-precision reference, several
// heads at once against one at a time (rows no head weighs hold NaN), and f16 rows against the
// same rows widened.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/weighted_sum.h"
#include "kernels/dtype.h"
#include "tests/support/random_values.h"

using namespace snapstream::kernels::cpu;
using snapstream::test::random_values;

TEST_CASE("a weighted row sum matches a double-precision reference and skips zero-weight rows", "[weighted_sum]") {
  const int64_t width = GENERATE(1, 8, 13, 64, 72, 128);
  const int64_t count = 37, stride = width + 3;
  auto rows = random_values(static_cast<size_t>(count * stride), 1);
  auto weights = random_values(static_cast<size_t>(count), 2);
  for (int64_t s = 0; s < count; s += 5) {
    weights[static_cast<size_t>(s)] = 0.0f;
    rows[static_cast<size_t>(s * stride)] = std::numeric_limits<float>::quiet_NaN();  // never read
  }
  std::vector<float> out(static_cast<size_t>(width));
  weighted_row_sums(weights.data(), count, 1, rows.data(), count, stride, width, out.data(), width);
  for (int64_t d = 0; d < width; ++d) {
    double exact = 0.0, magnitude = 0.0;
    for (int64_t s = 0; s < count; ++s) {
      if (weights[static_cast<size_t>(s)] == 0.0f) continue;
      const double term = static_cast<double>(weights[static_cast<size_t>(s)]) * rows[static_cast<size_t>(s * stride + d)];
      exact += term;
      magnitude += std::fabs(term);
    }
    INFO("column " << d);
    CHECK(std::fabs(out[static_cast<size_t>(d)] - exact) <= 1e-6 * magnitude);
  }
}

TEST_CASE("several heads' weighted sums equal one head's at a time", "[weighted_sum]") {
  const int64_t width = GENERATE(1, 8, 13, 16, 24, 32, 64, 72, 128);
  const int64_t heads = GENERATE(1, 2, 3, 5, 8);
  const int64_t count = 41, stride = width + 1, weights_stride = count + 2, out_stride = width + 4;
  auto rows = random_values(static_cast<size_t>(count * stride), 3);
  auto weights = random_values(static_cast<size_t>(heads * weights_stride), 4);
  // Masked rows: zero for every head, and holding NaN. Row 4 is zero for head 0 only.
  for (int64_t s = 0; s < count; s += 6) {
    for (int64_t h = 0; h < heads; ++h) weights[static_cast<size_t>(h * weights_stride + s)] = 0.0f;
    rows[static_cast<size_t>(s * stride + width / 2)] = std::numeric_limits<float>::quiet_NaN();
  }
  weights[4] = 0.0f;
  std::vector<float> together(static_cast<size_t>(heads * out_stride), -1.0f), alone(static_cast<size_t>(width));
  weighted_row_sums(weights.data(), weights_stride, heads, rows.data(), count, stride, width, together.data(), out_stride);
  for (int64_t h = 0; h < heads; ++h) {
    weighted_row_sums(weights.data() + h * weights_stride, weights_stride, 1, rows.data(), count, stride, width, alone.data(),
                      width);
    for (int64_t d = 0; d < width; ++d) {
      INFO("head " << h << " column " << d);
      CHECK(together[static_cast<size_t>(h * out_stride + d)] == alone[static_cast<size_t>(d)]);
    }
  }
}

TEST_CASE("weighted sums over f16 rows equal those over the rows widened to f32", "[weighted_sum]") {
  const int64_t width = GENERATE(1, 8, 13, 32, 64, 72);
  const int64_t heads = GENERATE(1, 2, 5);
  const int64_t count = 29, stride = width + 2;
  const auto values = random_values(static_cast<size_t>(count * stride), 5);
  auto weights = random_values(static_cast<size_t>(heads * count), 6);
  for (int64_t s = 0; s < count; s += 4)
    for (int64_t h = 0; h < heads; ++h) weights[static_cast<size_t>(h * count + s)] = 0.0f;
  std::vector<uint16_t> half(values.size());
  std::vector<float> widened(values.size());
  for (size_t i = 0; i < values.size(); ++i) widened[i] = snapstream::kernels::f16_to_f32(half[i] = snapstream::kernels::f32_to_f16(values[i]));
  std::vector<float> from_half(static_cast<size_t>(heads * width)), from_widened(from_half.size());
  weighted_row_sums(weights.data(), count, heads, half.data(), count, stride, width, from_half.data(), width);
  weighted_row_sums(weights.data(), count, heads, widened.data(), count, stride, width, from_widened.data(), width);
  CHECK(from_half == from_widened);
}
