// exp_shifted_row against double-precision exp: accuracy over the whole float range, the edges
// (underflow to exactly zero, -inf, overflow, NaN) and the row sum.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/exp_row.h"

using snapstream::kernels::cpu::exp_shifted_row;

namespace {
// Distance in units in the last place between a float and the exact value.
double ulps_from(float got, double exact) {
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(exact)) - 23);
  return std::fabs(got - exact) / ulp;
}
}  // namespace

TEST_CASE("exp_shifted_row is within 2 ulp of exp on every normal result", "[exp]") {
  std::vector<float> inputs;
  for (float v = -87.0f; v <= 88.0f; v += 0.0137f) inputs.push_back(v);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> near_zero(-1.0f, 1.0f);
  for (int i = 0; i < 5000; ++i) inputs.push_back(near_zero(rng));
  // Odd lengths exercise the vector loop's tail.
  inputs.resize(inputs.size() | 1);
  std::vector<float> row = inputs;
  exp_shifted_row(row.data(), static_cast<int64_t>(row.size()), 0.0f);
  double worst = 0.0;
  for (size_t i = 0; i < row.size(); ++i) worst = std::max(worst, ulps_from(row[i], std::exp(double{inputs[i]})));
  CHECK(worst <= 2.0);
}

TEST_CASE("exp_shifted_row subtracts the shift and sums the row", "[exp]") {
  std::mt19937 rng(11);
  std::normal_distribution<float> scores(0.0f, 4.0f);
  for (const int64_t n : {1, 7, 8, 9, 63, 1000}) {
    std::vector<float> row(static_cast<size_t>(n));
    for (float& v : row) v = scores(rng);
    const std::vector<float> original = row;
    const float shift = 3.25f;
    const float sum = exp_shifted_row(row.data(), n, shift);
    double exact_sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double exact = std::exp(double{original[static_cast<size_t>(i)] - shift});
      exact_sum += exact;
      CHECK(ulps_from(row[static_cast<size_t>(i)], exact) <= 2.0);
    }
    CHECK(sum == Approx(exact_sum).epsilon(1e-6));
  }
}

TEST_CASE("exp_shifted_row gives exactly zero for masked and far-off scores, inf above range, NaN for NaN",
          "[exp]") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> row{-inf, -88.0f, -1000.0f, -87.0f, 89.0f, inf, std::nanf(""), 0.0f};
  exp_shifted_row(row.data(), static_cast<int64_t>(row.size()), 0.0f);
  CHECK(row[0] == 0.0f);
  CHECK(row[1] == 0.0f);
  CHECK(row[2] == 0.0f);
  CHECK(row[3] > 0.0f);
  CHECK(row[3] == Approx(std::exp(-87.0)).epsilon(1e-6));
  CHECK(row[4] == inf);
  CHECK(row[5] == inf);
  CHECK(std::isnan(row[6]));
  CHECK(row[7] == 1.0f);
}

TEST_CASE("exp_row scales its input and writes elsewhere", "[exp]") {
  std::vector<float> in{-3.0f, 0.0f, 0.5f, 40.0f, -100.0f};
  std::vector<float> out(in.size());
  snapstream::kernels::cpu::exp_row(in.data(), -1.0f, out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i + 1 < in.size(); ++i) CHECK(ulps_from(out[i], std::exp(-double{in[i]})) <= 2.0);
  CHECK(out.back() == std::numeric_limits<float>::infinity());  // e^100 is beyond float
  CHECK(in[0] == -3.0f);
}

TEST_CASE("a value's exp does not depend on the row around it, and the sum adds eight lanes in a fixed order", "[exp]") {
  std::mt19937 rng(19);
  std::normal_distribution<float> scores(-2.0f, 6.0f);
  for (int64_t n = 0; n <= 70; ++n) {
    std::vector<float> row(static_cast<size_t>(n));
    for (float& v : row) v = scores(rng);
    const std::vector<float> original = row;
    const float sum = exp_shifted_row(row.data(), n, 1.75f);
    float lanes[8] = {};
    for (int64_t i = 0; i < n; ++i) {
      float alone = original[static_cast<size_t>(i)];
      exp_shifted_row(&alone, 1, 1.75f);
      INFO("length " << n << " index " << i);
      REQUIRE(row[static_cast<size_t>(i)] == alone);
      lanes[i % 8] += alone;
    }
    INFO("length " << n);
    CHECK(sum == ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7])));
  }
}
