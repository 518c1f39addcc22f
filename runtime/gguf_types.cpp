// Tables of GGUF value types and ggml tensor types (sizes from the GGUF specification).
#include "runtime/gguf_types.h"

#include <array>

namespace snapstream::runtime {
namespace {
using kernels::DType;

// Every tensor type this reader can size, so `info` can describe files it cannot run.
constexpr std::array kGgmlTypes = {
    GgmlTypeInfo{0, "F32", 1, 4, DType::F32},        GgmlTypeInfo{1, "F16", 1, 2, DType::F16},
    GgmlTypeInfo{2, "Q4_0", 32, 18, DType::Q4_0},    GgmlTypeInfo{3, "Q4_1", 32, 20, {}},
    GgmlTypeInfo{6, "Q5_0", 32, 22, DType::Q5_0},    GgmlTypeInfo{7, "Q5_1", 32, 24, {}},
    GgmlTypeInfo{8, "Q8_0", 32, 34, DType::Q8_0},    GgmlTypeInfo{9, "Q8_1", 32, 36, {}},
    GgmlTypeInfo{10, "Q2_K", 256, 84, {}},           GgmlTypeInfo{11, "Q3_K", 256, 110, {}},
    GgmlTypeInfo{12, "Q4_K", 256, 144, DType::Q4_K}, GgmlTypeInfo{13, "Q5_K", 256, 176, DType::Q5_K},
    GgmlTypeInfo{14, "Q6_K", 256, 210, DType::Q6_K}, GgmlTypeInfo{15, "Q8_K", 256, 292, {}},
    GgmlTypeInfo{24, "I8", 1, 1, {}},                GgmlTypeInfo{25, "I16", 1, 2, {}},
    GgmlTypeInfo{26, "I32", 1, 4, {}},               GgmlTypeInfo{27, "I64", 1, 8, {}},
    GgmlTypeInfo{28, "F64", 1, 8, {}},               GgmlTypeInfo{30, "BF16", 1, 2, DType::BF16},
};
}  // namespace

bool gguf_value_type_known(uint32_t code) { return code <= static_cast<uint32_t>(GgufValueType::Float64); }

std::string_view gguf_value_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::UInt8: return "u8";
    case GgufValueType::Int8: return "i8";
    case GgufValueType::UInt16: return "u16";
    case GgufValueType::Int16: return "i16";
    case GgufValueType::UInt32: return "u32";
    case GgufValueType::Int32: return "i32";
    case GgufValueType::Float32: return "f32";
    case GgufValueType::Bool: return "bool";
    case GgufValueType::String: return "string";
    case GgufValueType::Array: return "array";
    case GgufValueType::UInt64: return "u64";
    case GgufValueType::Int64: return "i64";
    case GgufValueType::Float64: return "f64";
  }
  return "unknown";
}

uint64_t gguf_value_fixed_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::UInt8:
    case GgufValueType::Int8:
    case GgufValueType::Bool: return 1;
    case GgufValueType::UInt16:
    case GgufValueType::Int16: return 2;
    case GgufValueType::UInt32:
    case GgufValueType::Int32:
    case GgufValueType::Float32: return 4;
    case GgufValueType::UInt64:
    case GgufValueType::Int64:
    case GgufValueType::Float64: return 8;
    case GgufValueType::String:
    case GgufValueType::Array: return 0;
  }
  return 0;
}

const GgmlTypeInfo* ggml_type_info(uint32_t code) {
  for (const auto& info : kGgmlTypes)
    if (info.code == code) return &info;
  return nullptr;
}

std::string computable_ggml_type_names() {
  std::string names;
  for (const auto& info : kGgmlTypes)
    if (info.dtype) names += (names.empty() ? "" : ", ") + std::string(info.name);
  return names;
}

const GgmlTypeInfo& ggml_type_info(kernels::DType dtype) {
  for (const auto& info : kGgmlTypes)
    if (info.dtype == dtype) return info;
  return kGgmlTypes[0];
}

}  // namespace snapstream::runtime
