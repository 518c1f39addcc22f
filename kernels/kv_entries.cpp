// Entry writes and gathers; the ring write of decode is write_entry at the ring's next entry.
#include "kernels/kv_entries.h"

#include <algorithm>

#include "kernels/cpu/f16_rows.h"
#include "kernels/dequantize.h"
#include "kernels/errors.h"
#include "kernels/quantize.h"

namespace snapstream::kernels {

bool is_kv_dtype(DType dtype) { return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::Q8_0; }

std::string kv_dtype_error(DType dtype, int64_t head_dim) {
  if (!is_kv_dtype(dtype)) return "the KV cache stores f32, f16 or q8_0, not " + std::string(dtype_name(dtype));
  const int64_t block = block_layout(dtype).elements;
  if (head_dim % block != 0)
    return "a " + std::string(dtype_name(dtype)) + " KV cache stores heads in blocks of " + std::to_string(block) +
           " values, and this model's heads have " + std::to_string(head_dim) + "; use --kv-dtype f16";
  return {};
}

void load_row(const std::byte* row, DType dtype, int64_t head_dim, float* out) {
  require(kv_dtype_error(dtype, head_dim).empty(), "load_row", [&] { return kv_dtype_error(dtype, head_dim); });
  if (dtype == DType::Q8_0) return cpu::widen_q8_0_blocks(row, head_dim / block_layout(dtype).elements, out);
  dequantize_row(dtype, row, head_dim, out);
}

void store_row(const float* values, DType dtype, int64_t head_dim, std::byte* row) {
  require(kv_dtype_error(dtype, head_dim).empty(), "store_row", [&] { return kv_dtype_error(dtype, head_dim); });
  if (dtype == DType::F16) return cpu::narrow_f16_row(values, head_dim, row);
  if (dtype == DType::Q8_0) return cpu::narrow_q8_0_blocks(values, head_dim / block_layout(dtype).elements, row);
  quantize_row(dtype, values, head_dim, row);
}

void write_entry(const float* token, int64_t kv_heads, int64_t head_dim, int64_t capacity, int64_t entry, KvRows cache) {
  require(token && cache.data, "write_entry", "null buffer");
  require(is_kv_dtype(cache.dtype), "write_entry", "a cache stores F32, F16 or Q8_0");
  require(entry >= 0 && entry < capacity, "write_entry",
          [&] { return "entry " + std::to_string(entry) + " outside the capacity"; });
  for (int64_t kv = 0; kv < kv_heads; ++kv)
    store_row(token + kv * head_dim, cache.dtype, head_dim, cache.row(kv * capacity + entry, head_dim));
}

void gather_positions(const float* dense, int64_t length, int64_t kv_heads, int64_t head_dim, int64_t kv_head,
                      const int32_t* positions, int64_t count, int64_t capacity, int64_t first_entry, KvRows cache) {
  require(dense && cache.data && (positions || count == 0), "gather_positions", "null buffer");
  require(is_kv_dtype(cache.dtype), "gather_positions", "a cache stores F32, F16 or Q8_0");
  require(kv_head >= 0 && kv_head < kv_heads, "gather_positions", "KV head out of range");
  require(first_entry >= 0 && count >= 0 && first_entry + count <= capacity, "gather_positions", "entries outside the capacity");
  for (int64_t i = 0; i < count; ++i) {
    require(positions[i] >= 0 && positions[i] < length, "gather_positions", "position outside the dense rows");
    store_row(dense + (positions[i] * kv_heads + kv_head) * head_dim, cache.dtype, head_dim,
              cache.row(kv_head * capacity + first_entry + i, head_dim));
  }
}

}  // namespace snapstream::kernels
