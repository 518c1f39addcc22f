// f16 and bf16 conversions: known encodings, round trips and rounding, one value and whole cache
// rows; Q8_0 cache rows and which head widths each cache type takes.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include <cstring>
#include <vector>

#include "kernels/dequantize.h"
#include "kernels/dtype.h"
#include "kernels/kv_entries.h"
#include "kernels/quantize.h"
#include "tests/support/random_values.h"

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

TEST_CASE("cache rows stored as f16 round as f32_to_f16 does, and load back as f16_to_f32", "[dtype]") {
  // Every f16's neighbourhood: the value itself, the halfway points either side (ties to even),
  // and values just off them; then the edges: subnormals, overflow, infinities, NaN, -0.
  std::vector<float> values;
  for (uint32_t bits = 0; bits < 0x7C00; bits += 7) {
    const float v = f16_to_f32(static_cast<uint16_t>(bits));
    const float next = f16_to_f32(static_cast<uint16_t>(bits + 1));
    const float half = v + (next - v) / 2;
    for (const float x : {v, half, std::nextafter(half, 0.0f), std::nextafter(half, 1e9f)}) {
      values.push_back(x);
      values.push_back(-x);
    }
  }
  for (const float x : {65504.0f, 65519.0f, 65520.0f, 1e6f, std::numeric_limits<float>::infinity(), -0.0f, 1e-10f,
                        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()})
    values.push_back(x);
  while (values.size() % 8 != 5) values.push_back(0.25f);  // a tail past the last eight
  const auto n = static_cast<int64_t>(values.size());
  std::vector<std::byte> row(static_cast<size_t>(2 * n));
  store_row(values.data(), DType::F16, n, row.data());
  std::vector<float> loaded(static_cast<size_t>(n));
  load_row(row.data(), DType::F16, n, loaded.data());
  for (int64_t i = 0; i < n; ++i) {
    uint16_t stored;
    std::memcpy(&stored, row.data() + 2 * i, 2);
    INFO("value " << values[static_cast<size_t>(i)] << " at " << i);
    REQUIRE(stored == f32_to_f16(values[static_cast<size_t>(i)]));
    const float expected = f16_to_f32(stored);
    REQUIRE(std::memcmp(&loaded[static_cast<size_t>(i)], &expected, sizeof expected) == 0);
  }
}

TEST_CASE("cache rows stored as Q8_0 hold quantize_row's blocks and load back within half a step", "[dtype]") {
  for (const int64_t head_dim : {int64_t{32}, int64_t{64}, int64_t{128}}) {
    INFO(head_dim << " values");
    auto values = snapstream::test::random_values(static_cast<size_t>(head_dim), static_cast<uint32_t>(head_dim));
    values[3] = -40.0f;
    std::vector<std::byte> row(static_cast<size_t>(row_bytes(DType::Q8_0, head_dim))), expected(row.size());
    REQUIRE(row.size() == static_cast<size_t>(head_dim / 32 * 34));
    store_row(values.data(), DType::Q8_0, head_dim, row.data());
    quantize_row(DType::Q8_0, values.data(), head_dim, expected.data());
    REQUIRE(row == expected);
    std::vector<float> loaded(static_cast<size_t>(head_dim));
    load_row(row.data(), DType::Q8_0, head_dim, loaded.data());
    for (int64_t block = 0; block < head_dim / 32; ++block) {
      uint16_t scale_bits;
      std::memcpy(&scale_bits, row.data() + 34 * block, 2);
      const float scale = f16_to_f32(scale_bits);
      for (int64_t i = 32 * block; i < 32 * (block + 1); ++i) {
        // Half a step of the grid, and the f16 rounding of the scale times the largest integer.
        const float bound = 0.5f * scale + 127.0f * scale * 0x1p-11f;
        REQUIRE(std::abs(loaded[static_cast<size_t>(i)] - values[static_cast<size_t>(i)]) <= bound);
      }
    }
  }
}

TEST_CASE("a cache type refuses head widths it cannot store, saying what to use instead", "[dtype]") {
  CHECK(kv_dtype_error(DType::F32, 8).empty());
  CHECK(kv_dtype_error(DType::F16, 8).empty());
  CHECK(kv_dtype_error(DType::Q8_0, 64).empty());
  CHECK_THAT(kv_dtype_error(DType::Q8_0, 8), Catch::Contains("blocks of 32") && Catch::Contains("--kv-dtype f16"));
  CHECK_THAT(kv_dtype_error(DType::Q4_K, 256), Catch::Contains("not q4_k"));
  std::vector<float> values(8, 1.0f);
  std::vector<std::byte> row(64);
  CHECK_THROWS_WITH(store_row(values.data(), DType::Q8_0, 8, row.data()), Catch::Contains("blocks of 32"));
}
