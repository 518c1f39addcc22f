// f16 and bf16 conversions: known encodings, round trips and rounding.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include <cstring>
#include <vector>

#include "kernels/dequantize.h"
#include "kernels/dtype.h"

using namespace snapstream::kernels;

TEST_CASE("f16 encodes known values exactly", "[dtype]") {
  CHECK(f32_to_f16(1.0f) == 0x3C00);
  CHECK(f32_to_f16(-2.0f) == 0xC000);
  CHECK(f32_to_f16(65504.0f) == 0x7BFF);
  CHECK(f32_to_f16(1e6f) == 0x7C00);  // saturates to infinity
  CHECK(f32_to_f16(5.9604645e-8f) == 0x0001);  // smallest subnormal
  CHECK(f16_to_f32(0x3555) == Approx(0.333251953125f));
  CHECK(f16_to_f32(0x0001) == 5.9604645e-8f);
  CHECK(std::isnan(f16_to_f32(f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("every finite f16 survives a round trip through f32", "[dtype]") {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    if ((h & 0x7C00) == 0x7C00) continue;  // inf/NaN
    REQUIRE(f32_to_f16(f16_to_f32(h)) == h);
  }
}

TEST_CASE("an f16 row decodes every value as the scalar conversion does, tails included", "[dtype]") {
  // All 65536 encodings (subnormals, infinities, NaNs), in a row whose length is no multiple of
  // a vector, starting one byte into the buffer so the loads are unaligned.
  const int64_t cols = 0x10000 + 5;
  std::vector<std::byte> bytes(static_cast<size_t>(2 * cols + 1));
  for (int64_t i = 0; i < cols; ++i) {
    const auto bits = static_cast<uint16_t>(i & 0xFFFF);
    std::memcpy(bytes.data() + 1 + 2 * i, &bits, 2);
  }
  std::vector<float> out(static_cast<size_t>(cols));
  dequantize_row(DType::F16, bytes.data() + 1, cols, out.data());
  for (int64_t i = 0; i < cols; ++i) {
    const float expected = f16_to_f32(static_cast<uint16_t>(i & 0xFFFF));
    if (std::isnan(expected)) {
      REQUIRE(std::isnan(out[static_cast<size_t>(i)]));
    } else {
      REQUIRE(std::memcmp(&out[static_cast<size_t>(i)], &expected, sizeof(float)) == 0);
    }
  }
}

TEST_CASE("f16 rounds to nearest even", "[dtype]") {
  // 1 + 2^-11 lies halfway between 1 and the next f16 (1 + 2^-10): ties go to the even one.
  CHECK(f32_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  CHECK(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
}

TEST_CASE("bf16 keeps the top 16 bits with rounding", "[dtype]") {
  CHECK(f32_to_bf16(1.0f) == 0x3F80);
  CHECK(bf16_to_f32(0x3F80) == 1.0f);
  CHECK(bf16_to_f32(f32_to_bf16(3.140625f)) == 3.140625f);
  CHECK(std::fabs(bf16_to_f32(f32_to_bf16(0.1f)) - 0.1f) < 0.001f);
}

TEST_CASE("row sizes follow each dtype's layout", "[dtype]") {
  CHECK(row_bytes(DType::F32, 10) == 40);
  CHECK(row_bytes(DType::BF16, 10) == 20);
  CHECK(row_bytes(DType::Q8_0, 64) == 68);
  CHECK_FALSE(row_length_supported(DType::Q8_0, 48));
  CHECK(row_length_supported(DType::F16, 7));
}
