// Element types of weight tensors the kernels understand, with their storage sizes and
// exact scalar conversions for the 16-bit float formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace snapstream::kernels {

// The block-quantised types are ggml's: Q8_0, Q4_0 and Q5_0 in blocks of 32 weights with one
// f16 scale; the K-quants Q4_K, Q5_K and Q6_K in super-blocks of 256 with per-sub-block scales
// (layouts in kernels/quant_blocks.h).
enum class DType : uint8_t { F32, F16, BF16, Q8_0, Q4_0, Q5_0, Q4_K, Q5_K, Q6_K };

inline constexpr DType kAllDTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,
                                       DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

// `elements` consecutive values of a row are stored together in `bytes` bytes (1 and the
// element size for the float types).
struct BlockLayout {
  int64_t elements;
  int64_t bytes;
};
BlockLayout block_layout(DType dtype);
inline bool block_quantised(DType dtype) { return block_layout(dtype).elements > 1; }

// Q8_0 stores blocks of 32 weights as one f16 scale followed by 32 int8 values.
inline constexpr int64_t kQ8BlockSize = 32;
inline constexpr int64_t kQ8BlockBytes = 2 + kQ8BlockSize;

std::string_view dtype_name(DType dtype);
// The dtype whose dtype_name() is `name`, if any.
std::optional<DType> dtype_from_name(std::string_view name);
// Every dtype's name, for messages.
inline constexpr std::string_view kDTypeNames = "f32, f16, bf16, q8_0, q4_0, q5_0, q4_k, q5_k or q6_k";

// Bytes of the whole blocks that hold a row of `cols` elements (a partial block counts whole:
// a reader of the row's start or end must read all of it).
int64_t row_bytes(DType dtype, int64_t cols);
// Average storage per element, block scales included (Q4_K: 4.5 bits).
double bytes_per_element(DType dtype);

// Whether a row of `cols` elements can be stored in this dtype: a whole number of blocks.
bool row_length_supported(DType dtype, int64_t cols);

float f16_to_f32(uint16_t bits);
uint16_t f32_to_f16(float value);  // round to nearest even, saturating to infinity
float bf16_to_f32(uint16_t bits);
uint16_t f32_to_bf16(float value);  // round to nearest even, NaN stays NaN

}  // namespace snapstream::kernels
