// Q8_0 against a block worked out by hand, and quantise→dequantise error bounds.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/dequantize.h"
#include "kernels/quantize.h"

using namespace snapstream::kernels;

TEST_CASE("a hand-built Q8_0 block dequantises to scale * q", "[q8_0]") {
  // Scale 0.5 is f16 0x3800; q runs -16..15.
  std::byte block[kQ8BlockBytes];
  const uint16_t scale = 0x3800;
  std::memcpy(block, &scale, 2);
  for (int i = 0; i < 32; ++i) {
    const auto q = static_cast<int8_t>(i - 16);
    std::memcpy(block + 2 + i, &q, 1);
  }
  float out[32];
  dequantize_row(DType::Q8_0, block, 32, out);
  CHECK(out[0] == -8.0f);
  CHECK(out[16] == 0.0f);
  CHECK(out[17] == 0.5f);
  CHECK(out[31] == 7.5f);
}

TEST_CASE("Q8_0 quantisation picks scale max|x|/127 and rounds", "[q8_0]") {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.27f;   // the largest magnitude: scale 0.01
  x[1] = -0.5f;   // -50
  x[2] = 0.013f;  // 1.3 rounds to 1
  std::byte block[kQ8BlockBytes];
  quantize_row(DType::Q8_0, x.data(), 32, block);
  uint16_t scale_bits;
  std::memcpy(&scale_bits, block, 2);
  CHECK(scale_bits == f32_to_f16(0.01f));
  const auto* q = reinterpret_cast<const int8_t*>(block + 2);
  CHECK(q[0] == 127);
  CHECK(q[1] == -50);
  CHECK(q[2] == 1);
  CHECK(q[3] == 0);
}

TEST_CASE("Q8_0 round trip error stays within half a step", "[q8_0]") {
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * (1.0f + static_cast<float>(i % 7));
  std::vector<std::byte> packed(static_cast<size_t>(row_bytes(DType::Q8_0, 256)));
  quantize_row(DType::Q8_0, x.data(), 256, packed.data());
  std::vector<float> back(256);
  dequantize_row(DType::Q8_0, packed.data(), 256, back.data());
  for (size_t b = 0; b < 8; ++b) {
    float amax = 0.0f;
    for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    uint16_t scale_bits;
    std::memcpy(&scale_bits, packed.data() + b * kQ8BlockBytes, 2);
    // Half a quantisation step, plus what storing the scale in f16 costs at |q| <= 127.
    const float step = amax / 127.0f;
    const float bound = 0.5f * step + 127.0f * std::fabs(f16_to_f32(scale_bits) - step) + 1e-6f;
    for (size_t i = 0; i < 32; ++i) REQUIRE(std::fabs(back[b * 32 + i] - x[b * 32 + i]) <= bound);
  }
}
