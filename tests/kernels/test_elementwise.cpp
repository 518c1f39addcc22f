// rmsnorm, rope, softmax, swiglu and argmax against their textbook definitions.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernels/argmax.h"
#include "kernels/errors.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "kernels/softmax.h"
#include "kernels/swiglu.h"

using namespace snapstream::kernels;

TEST_CASE("rmsnorm scales each row to unit RMS times the weight", "[elementwise]") {
  const std::vector<float> x = {1, 2, 3, 4, -1, -1, -1, -1};
  const std::vector<float> w = {1, 0.5f, 2, 1};
  std::vector<float> y(8);
  rmsnorm(x.data(), w.data(), 2, 4, 1e-5f, y.data());
  const double rms0 = std::sqrt((1 + 4 + 9 + 16) / 4.0 + 1e-5);
  CHECK(y[1] == Approx(2 * 0.5 / rms0));
  CHECK(y[2] == Approx(3 * 2 / rms0));
  CHECK(y[4] == Approx(-1 / std::sqrt(1 + 1e-5)));
}

TEST_CASE("rope rotates adjacent pairs by position times frequency", "[elementwise]") {
  std::vector<float> x = {1, 0, 1, 0, 0, 1, 0, 1};  // two heads of dim 4
  rope(x.data(), 2, 4, 3, RopeSpec{10000.0f});
  // Pair 0 turns by 3 rad, pair 1 by 3 / 100 rad.
  CHECK(x[0] == Approx(std::cos(3.0)));
  CHECK(x[1] == Approx(std::sin(3.0)));
  CHECK(x[2] == Approx(std::cos(0.03)));
  CHECK(x[3] == Approx(std::sin(0.03)));
  CHECK(x[4] == Approx(-std::sin(3.0)));
  CHECK(x[5] == Approx(std::cos(3.0)));
  std::vector<float> odd(3);
  CHECK_THROWS_AS(rope(odd.data(), 1, 3, 0, RopeSpec{10000.0f}), KernelArgumentError);
}

TEST_CASE("half-split rope pairs x[i] with x[i + d/2], and divisors slow each pair down", "[elementwise]") {
  std::vector<float> x = {1, 1, 0, 0};  // one head of dim 4: pairs (x0, x2) and (x1, x3)
  const float divisors[2] = {1.0f, 8.0f};
  rope(x.data(), 1, 4, 3, RopeSpec{10000.0f, RopePairs::Halves, divisors});
  // Pair 0 turns by 3 rad; pair 1 by 3 / 100 / 8 rad.
  CHECK(x[0] == Approx(std::cos(3.0)));
  CHECK(x[2] == Approx(std::sin(3.0)));
  CHECK(x[1] == Approx(std::cos(0.03 / 8)));
  CHECK(x[3] == Approx(std::sin(0.03 / 8)));
  // Turning back by the same position restores the input.
  rope(x.data(), 1, 4, -3, RopeSpec{10000.0f, RopePairs::Halves, divisors});
  CHECK(x[0] == Approx(1.0f));
  CHECK(x[1] == Approx(1.0f));
  CHECK(x[2] == Approx(0.0f).margin(1e-6));
  CHECK(x[3] == Approx(0.0f).margin(1e-6));
}

TEST_CASE("softmax sums to one and survives large logits", "[elementwise]") {
  std::vector<float> x = {1000.0f, 1001.0f, 999.0f};
  softmax(x.data(), 3);
  CHECK(x[0] + x[1] + x[2] == Approx(1.0));
  CHECK(x[1] == Approx(std::exp(1.0) / (1 + std::exp(1.0) + std::exp(-1.0))));
}

TEST_CASE("swiglu is silu(gate) times up", "[elementwise]") {
  std::vector<float> gate = {-2, 0, 3}, up = {1, 5, 2};
  swiglu(gate.data(), up.data(), 3);
  CHECK(gate[0] == Approx(-2 / (1 + std::exp(2.0))));
  CHECK(gate[1] == 0.0f);
  CHECK(gate[2] == Approx(3 / (1 + std::exp(-3.0)) * 2));
}

TEST_CASE("argmax returns the earliest of equal maxima", "[elementwise]") {
  const std::vector<float> x = {1, 5, 2, 5};
  CHECK(argmax(x.data(), 4) == 1);
}
