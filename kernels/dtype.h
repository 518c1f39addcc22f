// Element types of weight tensors the kernels understand, with their storage sizes and
// exact scalar conversions for the 16-bit float formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace snapstream::kernels {

enum class DType : uint8_t { F32, F16, BF16, Q8_0 };

// Q8_0 stores blocks of 32 weights as one f16 scale followed by 32 int8 values.
inline constexpr int64_t kQ8BlockSize = 32;
inline constexpr int64_t kQ8BlockBytes = 2 + kQ8BlockSize;

std::string_view dtype_name(DType dtype);
// The dtype whose dtype_name() is `name`, if any.
std::optional<DType> dtype_from_name(std::string_view name);
// Every dtype's name, for messages: "f32, f16, bf16 or q8_0".
inline constexpr std::string_view kDTypeNames = "f32, f16, bf16 or q8_0";

// Bytes that one row of `cols` elements occupies. For Q8_0, cols must be a multiple of 32.
int64_t row_bytes(DType dtype, int64_t cols);

// Whether a row of `cols` elements can be stored in this dtype.
bool row_length_supported(DType dtype, int64_t cols);

float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);  // round to nearest even, saturating to infinity
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);  // round to nearest even, NaN stays NaN

}  // namespace snapstream::kernels
