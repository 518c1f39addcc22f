// Q4_0, Q5_0, Q4_K, Q5_K and Q6_K: blocks worked out by hand (both branches of
// the K-quant 6-bit scale packing), random blocks against a naive
// element-by-element reference, and quantise→dequantise error bounds.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/activation_rounding.h"
#include "kernels/dequantize.h"
#include "kernels/quant_blocks.h"
#include "kernels/quantize.h"

using namespace snapstream::kernels;

namespace {

constexpr uint16_t kHalfF16 = 0x3800;     // 0.5
constexpr uint16_t kQuarterF16 = 0x3400;  // 0.25
constexpr uint16_t kOneF16 = 0x3C00;      // 1.0

void put_u16(std::vector<std::byte>& block, size_t at, uint16_t value) { std::memcpy(block.data() + at, &value, 2); }
uint8_t& byte_at(std::vector<std::byte>& block, size_t at) { return reinterpret_cast<uint8_t&>(block[at]); }

std::vector<float> decode(DType dtype, const std::vector<std::byte>& block) {
  std::vector<float> out(static_cast<size_t>(block_layout(dtype).elements));
  dequantize_row(dtype, block.data(), block_layout(dtype).elements, out.data());
  return out;
}

// The reference: each element from its own position, reading the layout as bit
// fields rather than walking it in the decoder's order.
uint8_t u8(const std::vector<std::byte>& b, size_t at) { return static_cast<uint8_t>(b[at]); }
double f16(const std::vector<std::byte>& b, size_t at) {
  uint16_t bits;
  std::memcpy(&bits, b.data() + at, 2);
  return f16_to_f32(bits);
}
int bit(uint32_t word, int index) { return static_cast<int>((word >> index) & 1u); }

int k_scale(const std::vector<std::byte>& b, size_t scales_at, int sub) {
  if (sub < 4) return u8(b, scales_at + sub) % 64;
  return u8(b, scales_at + sub + 4) % 16 + 16 * (u8(b, scales_at + sub - 4) / 64);
}
int k_min(const std::vector<std::byte>& b, size_t scales_at, int sub) {
  if (sub < 4) return u8(b, scales_at + sub + 4) % 64;
  return u8(b, scales_at + sub + 4) / 16 + 16 * (u8(b, scales_at + sub) / 64);
}

double reference_element(DType dtype, const std::vector<std::byte>& b, int i) {
  switch (dtype) {
    case DType::Q4_0: {
      const int nibble = i < 16 ? u8(b, 2 + i) % 16 : u8(b, 2 + i - 16) / 16;
      return f16(b, 0) * (nibble - 8);
    }
    case DType::Q5_0: {
      uint32_t qh;
      std::memcpy(&qh, b.data() + 2, 4);
      const int nibble = i < 16 ? u8(b, 6 + i) % 16 : u8(b, 6 + i - 16) / 16;
      return f16(b, 0) * (nibble + 16 * bit(qh, i) - 16);
    }
    case DType::Q4_K:
    case DType::Q5_K: {
      const bool five = dtype == DType::Q5_K;
      const int sub = i / 32, l = i % 32;
      const size_t qs = five ? 48 : 16;
      const uint8_t byte = u8(b, qs + 32 * static_cast<size_t>(i / 64) + static_cast<size_t>(l));
      int q = sub % 2 == 0 ? byte % 16 : byte / 16;
      if (five) q += 16 * bit(u8(b, 16 + static_cast<size_t>(l)), sub);
      return f16(b, 0) * k_scale(b, 4, sub) * q - f16(b, 2) * k_min(b, 4, sub);
    }
    case DType::Q6_K: {
      const int half = i / 128, part = (i % 128) / 32, l = i % 32;
      const uint8_t low = u8(b, static_cast<size_t>(64 * half + l + 32 * (part % 2)));
      const int nibble = part < 2 ? low % 16 : low / 16;
      const int top = (u8(b, static_cast<size_t>(128 + 32 * half + l)) >> (2 * part)) & 3;
      const auto scale = static_cast<int8_t>(u8(b, static_cast<size_t>(192 + i / 16)));
      return f16(b, 208) * scale * (nibble + 16 * top - 32);
    }
    default: return 0.0;
  }
}

// f16 fields of a random block get finite, moderate values; every other byte is
// random.
std::vector<std::byte> random_block(DType dtype, std::mt19937& rng) {
  std::vector<std::byte> block(static_cast<size_t>(block_layout(dtype).bytes));
  for (auto& byte : block) byte = static_cast<std::byte>(rng() & 0xFF);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  const size_t d_at = dtype == DType::Q6_K ? 208 : 0;
  put_u16(block, d_at, f32_to_f16(scale(rng)));
  if (dtype == DType::Q4_K || dtype == DType::Q5_K) put_u16(block, 2, f32_to_f16(scale(rng)));
  return block;
}


// A Gaussian row of `cols` values, and the same row stored in `dtype`.
struct StoredRow {
  std::vector<float> values;
  std::vector<std::byte> packed;
};
StoredRow stored_gaussian_row(DType dtype, int64_t cols, uint32_t seed) {
  StoredRow row;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  row.values.resize(static_cast<size_t>(cols));
  for (auto& v : row.values) v = normal(rng);
  row.packed.resize(static_cast<size_t>(row_bytes(dtype, cols)));
  quantize_row(dtype, row.values.data(), cols, row.packed.data());
  return row;
}
}  // namespace

TEST_CASE("a hand-built Q4_0 block: low nibbles first, then high, minus 8", "[quant]") {
  std::vector<std::byte> block(18);
  put_u16(block, 0, kHalfF16);
  for (size_t j = 0; j < 16; ++j) byte_at(block, 2 + j) = 0x88;  // every value 0
  byte_at(block, 2) = 0x9F;                                      // x0 = (15-8)/2, x16 = (9-8)/2
  byte_at(block, 17) = 0x03;                                     // x15 = (3-8)/2, x31 = (0-8)/2
  const auto x = decode(DType::Q4_0, block);
  CHECK(x[0] == 3.5f);
  CHECK(x[16] == 0.5f);
  CHECK(x[15] == -2.5f);
  CHECK(x[31] == -4.0f);
  CHECK(x[1] == 0.0f);
}

TEST_CASE("a hand-built Q5_0 block takes each value's fifth bit from qh", "[quant]") {
  std::vector<std::byte> block(22);
  put_u16(block, 0, kQuarterF16);
  const uint32_t qh = (1u << 0) | (1u << 17);  // fifth bits of x0 and x17
  std::memcpy(block.data() + 2, &qh, 4);
  byte_at(block, 6) = 0x0F;  // x0 = 15 + 16, x16 = 0
  byte_at(block, 7) = 0x20;  // x1 = 0, x17 = 2 + 16
  const auto x = decode(DType::Q5_0, block);
  CHECK(x[0] == 3.75f);   // (31-16)/4
  CHECK(x[16] == -4.0f);  // (0-16)/4
  CHECK(x[1] == -4.0f);
  CHECK(x[17] == 0.5f);  // (18-16)/4
}

TEST_CASE("a hand-built Q4_K block: both branches of the 6-bit scale packing", "[quant]") {
  std::vector<std::byte> block(144);
  put_u16(block, 0, kOneF16);   // d
  put_u16(block, 2, kHalfF16);  // dmin
  // Sub-block 1 (bytes j and j+4): scale 3, min 2.
  byte_at(block, 4 + 1) = 3;
  byte_at(block, 4 + 5) = 2;
  // Sub-block 6 (nibbles of byte j+4, top bits in j-4 and j): scale 37 =
  // 0b10'0101, min 20 = 0b01'0100.
  byte_at(block, 4 + 10) = 0x45;  // scale's low nibble 5, min's 4
  byte_at(block, 4 + 2) = 0x80;   // scale's top bits 0b10
  byte_at(block, 4 + 6) = 0x40;   // min's top bits 0b01
  const ScaleMin six = k_quant_scale_min(reinterpret_cast<const uint8_t*>(block.data() + 4), 6);
  CHECK(int(six.scale) == 37);
  CHECK(int(six.min) == 20);
  // Sub-block 1 is the high nibbles of qs[0..31]; sub-block 6 the low nibbles
  // of qs[96..127].
  byte_at(block, 16 + 0) = 0x70;
  byte_at(block, 16 + 96) = 0x0A;
  const auto x = decode(DType::Q4_K, block);
  CHECK(x[32] == 20.0f);    // 1·3·7 − 0.5·2
  CHECK(x[33] == -1.0f);    // 1·3·0 − 0.5·2
  CHECK(x[192] == 360.0f);  // 1·37·10 − 0.5·20
  CHECK(x[193] == -10.0f);
  CHECK(x[0] == 0.0f);    // sub-block 0: scale 0, min 0
  CHECK(x[224] == 0.0f);  // sub-block 7 likewise
}

TEST_CASE("a hand-built Q5_K block adds the fifth bit from qh", "[quant]") {
  std::vector<std::byte> block(176);
  put_u16(block, 0, kOneF16);
  put_u16(block, 2, kOneF16);
  byte_at(block, 4 + 0) = 0x41;    // sub-block 0 scale 1; top bits 0b01 belong to sub-block 4's scale
  byte_at(block, 4 + 1) = 2;       // sub-block 1 scale 2
  byte_at(block, 4 + 5) = 1;       // sub-block 1 min 1
  byte_at(block, 4 + 4) = 0x80;    // sub-block 0 min 0; top bits 0b10 belong to sub-block 4's min
  byte_at(block, 4 + 8) = 0x11;    // sub-block 4: scale 0b01'0001 = 17, min 0b10'0001 = 33
  byte_at(block, 16 + 0) = 0x03;   // qh[0]: bits 0 and 1 (sub-blocks 0 and 1), not bit 4
  byte_at(block, 48 + 0) = 0x03;   // qs[0]: value 0 low nibble 3, value 32 high nibble 0
  byte_at(block, 48 + 64) = 0x02;  // qs[64]: value 128 (sub-block 4) low nibble 2
  const auto x = decode(DType::Q5_K, block);
  CHECK(x[0] == 19.0f);   // 1·1·(3+16) − 0
  CHECK(x[32] == 31.0f);  // 1·2·(0+16) − 1·1
  CHECK(x[128] == 1.0f);  // 1·17·2 − 1·33
}

TEST_CASE("a hand-built Q6_K block: scale i/16, nibbles and two high bits", "[quant]") {
  std::vector<std::byte> block(210);
  put_u16(block, 208, kHalfF16);
  auto* scales = reinterpret_cast<int8_t*>(block.data() + 192);
  scales[0] = 2;
  scales[6] = 1;
  scales[9] = -3;
  byte_at(block, 0) = 0x05;    // value 0's low nibble
  byte_at(block, 32) = 0xF0;   // value 96's low nibble (high nibble of ql[32])
  byte_at(block, 128) = 0xC2;  // qh[0]: value 0's top bits 0b10, value 96's 0b11
  const auto x = decode(DType::Q6_K, block);
  CHECK(x[0] == 5.0f);     // 0.5·2·(37−32)
  CHECK(x[1] == -32.0f);   // 0.5·2·(0−32)
  CHECK(x[96] == 15.5f);   // 0.5·1·(63−32)
  CHECK(x[144] == 48.0f);  // 0.5·(−3)·(0−32)
  CHECK(x[32] == 0.0f);    // scale 2 of the block is 0
}

TEST_CASE("random blocks of every type decode as the element-wise reference does", "[quant]") {
  const DType dtype = GENERATE(DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K);
  INFO(dtype_name(dtype));
  std::mt19937 rng(17);
  for (int trial = 0; trial < 50; ++trial) {
    const auto block = random_block(dtype, rng);
    const auto x = decode(dtype, block);
    for (int i = 0; i < static_cast<int>(x.size()); ++i) {
      INFO("element " << i);
      REQUIRE(x[static_cast<size_t>(i)] == Approx(reference_element(dtype, block, i)).epsilon(1e-6).margin(1e-7));
    }
  }
}

TEST_CASE("the K-quant scale packing round-trips every scale and min", "[quant]") {
  uint8_t scales[12] = {};
  for (int j = 0; j < 8; ++j)
    k_quant_pack_scale_min(scales, j, {static_cast<uint8_t>(63 - 5 * j), static_cast<uint8_t>(7 * j + 3)});
  for (int j = 0; j < 8; ++j) {
    const ScaleMin back = k_quant_scale_min(scales, j);
    CHECK(int(back.scale) == 63 - 5 * j);
    CHECK(int(back.min) == 7 * j + 3);
  }
}

TEST_CASE("quantise then dequantise stays within each type's resolution", "[quant]") {
  // Relative RMS error of a Gaussian row: about step/sqrt(12) over the row's
  // spread.
  const auto [dtype, bound] = GENERATE(table<DType, double>({{DType::Q8_0, 0.01},
                                                             {DType::Q6_K, 0.03},
                                                             {DType::Q5_0, 0.05},
                                                             {DType::Q5_K, 0.05},
                                                             {DType::Q4_0, 0.1},
                                                             {DType::Q4_K, 0.1}}));
  INFO(dtype_name(dtype));
  const int64_t cols = 1024;
  const StoredRow row = stored_gaussian_row(dtype, cols, 5);
  const std::vector<float>& x = row.values;
  std::vector<float> back(static_cast<size_t>(cols));
  dequantize_row(dtype, row.packed.data(), cols, back.data());
  double error = 0.0, norm = 0.0;
  for (int64_t i = 0; i < cols; ++i) {
    error += (back[i] - x[i]) * (back[i] - x[i]);
    norm += x[i] * x[i];
  }
  const double relative = std::sqrt(error / norm);
  INFO("relative RMS error " << relative);
  CHECK(relative < bound);
  CHECK(relative > 0.0);
}

TEST_CASE("a span starting inside a block decodes the same values as the whole row", "[quant]") {
  const DType dtype = GENERATE(DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K);
  const int64_t cols = 768;
  const StoredRow row = stored_gaussian_row(dtype, cols, 9);
  std::vector<float> whole(static_cast<size_t>(cols));
  dequantize_row(dtype, row.packed.data(), cols, whole.data());
  for (const auto& [first, count] : {std::pair<int64_t, int64_t>{128, 128}, {100, 500}, {384, 384}, {0, 17}}) {
    std::vector<float> part(static_cast<size_t>(count));
    dequantize_span(dtype, row.packed.data(), first, count, part.data());
    for (int64_t i = 0; i < count; ++i) REQUIRE(part[i] == whole[first + i]);
  }
}

TEST_CASE("activations meet Q8_0 weights on the Q8_0 grid: f16 scale amax/127, ties to even", "[quant]") {
  std::vector<float> x(32, 0.0f);
  x[0] = 1.27f;     // amax: q = 127
  x[1] = -0.635f;   // q = -63.5, which rounds to the even -64
  x[2] = 0.005f;    // q = 0.5 -> 0
  std::vector<float> out(32);
  round_activations(DType::Q4_0, x.data(), 1, 32, out.data());
  const float scale = f16_to_f32(f32_to_f16(0.01f));  // 0.0099945...
  CHECK(out[0] == 127 * scale);
  CHECK(out[1] == -64 * scale);
  CHECK(out[2] == 0.0f);
  CHECK(activation_block(DType::Q8_0) == 32);
  CHECK(activation_block(DType::F16) == 0);
}

TEST_CASE("activations meet K-quant weights on the Q8_K grid: the signed extreme maps to -127", "[quant]") {
  std::vector<float> x(256, 0.0f);
  x[0] = -2.54f;  // the extreme: inverse scale -127 / -2.54 = 50, q = -127, back to -2.54
  x[1] = 2.54f;
  x[2] = 0.03f;   // 0.03 / 0.02 = 1.5 -> 2 (even)
  x[3] = 0.01f;   // 0.5 -> 0
  std::vector<float> out(256);
  round_activations(DType::Q6_K, x.data(), 1, 256, out.data());
  CHECK(out[0] == Approx(-2.54f));
  CHECK(out[1] == Approx(2.54f));
  CHECK(out[2] == Approx(0.04f));
  CHECK(out[3] == 0.0f);
  // A shorter last block (a column slice) is its own block.
  std::vector<float> tail = {0.5f, -0.25f};
  round_activations(DType::Q4_K, tail.data(), 1, 2, tail.data());
  CHECK(tail[0] == Approx(0.5f));
  CHECK(tail[1] == Approx(-0.25f).epsilon(0.01));
  CHECK(activation_block(DType::Q4_K) == 256);
}
