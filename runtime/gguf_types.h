// The type codes of the GGUF format: metadata value types and ggml tensor element types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/dtype.h"

namespace snapstream::runtime {

enum class GgufValueType : uint32_t {
  UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5, Float32 = 6,
  Bool = 7, String = 8, Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};

bool gguf_value_type_known(uint32_t code);
std::string_view gguf_value_type_name(GgufValueType type);
// Bytes of a fixed-size value; 0 for String and Array.
uint64_t gguf_value_fixed_size(GgufValueType type);

// One ggml tensor element type: `block_size` elements take `block_bytes` bytes.
struct GgmlTypeInfo {
  uint32_t code;
  std::string_view name;
  int64_t block_size;
  int64_t block_bytes;
  std::optional<kernels::DType> dtype;  // set when the kernels can compute with it
};

// nullptr for a code this reader does not know.
const GgmlTypeInfo* ggml_type_info(uint32_t code);
const GgmlTypeInfo& ggml_type_info(kernels::DType dtype);
// The names of the types the kernels compute with, for messages: "F32, F16, ...".
std::string computable_ggml_type_names();

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as little-endian u32
inline constexpr uint32_t kGgufDefaultAlignment = 32;

}  // namespace snapstream::runtime
