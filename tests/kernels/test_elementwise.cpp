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

TEST_CASE("rmsnorm gives the bits of one sequential double sum, tails included", "[elementwise]") {
  // The reference's order (llama.cpp's): one double sum, element by element.
  for (const int64_t dim : {1, 7, 8, 9, 64, 288, 771, 2048}) {
    std::vector<float> x(static_cast<size_t>(dim)), w(static_cast<size_t>(dim)), y(static_cast<size_t>(dim));
    for (int64_t j = 0; j < dim; ++j) {
      x[static_cast<size_t>(j)] = std::sin(0.37f * static_cast<float>(j) + 0.1f) * (1.0f + static_cast<float>(j % 13));
      w[static_cast<size_t>(j)] = 0.5f + 0.01f * static_cast<float>(j % 29);
    }
    rmsnorm(x.data(), w.data(), 1, dim, 1e-5f, y.data());
    double sum_squares = 0.0;
    for (const float v : x) sum_squares += static_cast<double>(v * v);
    const float scale = 1.0f / std::sqrt(static_cast<float>(sum_squares / static_cast<double>(dim)) + 1e-5f);
    for (int64_t j = 0; j < dim; ++j)
      REQUIRE(y[static_cast<size_t>(j)] == w[static_cast<size_t>(j)] * (scale * x[static_cast<size_t>(j)]));
  }
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

TEST_CASE("rope_by_turns gives the reference's bits, turns found once for many vectors", "[elementwise]") {
  // The reference's steps: the angle grows by theta^(-2/d) a pair, then each pair turns by it.
  const int64_t heads = 3, dim = 64, position = 1234;
  std::vector<float> divisors(dim / 2);
  for (size_t i = 0; i < divisors.size(); ++i) divisors[i] = 1.0f + 0.25f * static_cast<float>(i % 5);
  for (const RopePairs pairs : {RopePairs::Adjacent, RopePairs::Halves})
    for (const float* divide : {static_cast<const float*>(nullptr), static_cast<const float*>(divisors.data())}) {
      const RopeSpec spec{500000.0f, pairs, divide};
      std::vector<float> x(static_cast<size_t>(heads * dim));
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * static_cast<float>(i)) * 2.0f;
      std::vector<float> expected = x;
      const float step = std::pow(spec.theta, -2.0f / static_cast<float>(dim));
      float undivided = static_cast<float>(position);
      for (int64_t i = 0; i < dim / 2; ++i, undivided *= step) {
        const float angle = divide ? undivided / divide[i] : undivided;
        const float c = std::cos(angle), s = std::sin(angle);
        for (int64_t h = 0; h < heads; ++h) {
          float* first = expected.data() + h * dim + (pairs == RopePairs::Adjacent ? 2 * i : i);
          float* second = first + (pairs == RopePairs::Adjacent ? 1 : dim / 2);
          const float a = *first, b = *second;
          *first = a * c - b * s;
          *second = a * s + b * c;
        }
      }
      std::vector<float> turns(dim);
      rope_turns(dim, position, spec, turns.data());
      std::vector<float> by_turns = x;
      rope_by_turns(by_turns.data(), heads, dim, pairs, turns.data());
      rope(x.data(), heads, dim, position, spec);
      for (size_t i = 0; i < x.size(); ++i) {
        REQUIRE(by_turns[i] == expected[i]);
        REQUIRE(x[i] == expected[i]);
      }
    }
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
