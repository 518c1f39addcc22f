// Sizes and scalar conversions of the weight element types.
#include "kernels/dtype.h"

#include <bit>
#include <cmath>

namespace snapstream::kernels {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_0: return "q4_0";
    case DType::Q5_0: return "q5_0";
    case DType::Q4_K: return "q4_k";
    case DType::Q5_K: return "q5_k";
    case DType::Q6_K: return "q6_k";
  }
  return "unknown";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DType dtype : kAllDTypes)
    if (dtype_name(dtype) == name) return dtype;
  return std::nullopt;
}

BlockLayout block_layout(DType dtype) {
  switch (dtype) {
    case DType::F32: return {1, 4};
    case DType::F16:
    case DType::BF16: return {1, 2};
    case DType::Q8_0: return {kQ8BlockSize, kQ8BlockBytes};
    case DType::Q4_0: return {32, 18};
    case DType::Q5_0: return {32, 22};
    case DType::Q4_K: return {256, 144};
    case DType::Q5_K: return {256, 176};
    case DType::Q6_K: return {256, 210};
  }
  return {1, 4};
}

int64_t row_bytes(DType dtype, int64_t cols) {
  const BlockLayout block = block_layout(dtype);
  return (cols + block.elements - 1) / block.elements * block.bytes;
}

double bytes_per_element(DType dtype) {
  const BlockLayout block = block_layout(dtype);
  return static_cast<double>(block.bytes) / static_cast<double>(block.elements);
}

bool row_length_supported(DType dtype, int64_t cols) { return cols > 0 && cols % block_layout(dtype).elements == 0; }

float f16_to_f32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else {
    // Subnormal half: normalise it into a float's wider exponent range.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ffu;
    out = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t f32_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;  // rounds to or beyond infinity
  if (abs_bits < 0x38800000u) {
    // Result is subnormal or zero: scale by 2^24 and round to an integer count of 2^-24.
    const float magnitude = std::bit_cast<float>(abs_bits);
    const float scaled = std::nearbyint(magnitude * 16777216.0f);
    return sign | static_cast<uint16_t>(scaled);
  }
  const uint32_t exponent = ((abs_bits >> 23) - 112) << 10;
  const uint32_t mantissa = abs_bits & 0x7fffffu;
  uint32_t half = exponent | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return sign | static_cast<uint16_t>(half);
}

float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t f32_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace snapstream::kernels
