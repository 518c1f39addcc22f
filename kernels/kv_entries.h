// Moving token keys/values between the dense per-position layout ([position][kv_heads*head_dim])
// and a sequence's cache entries ([kv_heads][capacity][head_dim]): an entry holds one token's
// vector for each KV head. The cache stores its vectors as f32, as f16 at half the memory, or as
// Q8_0 blocks (32 values and an f16 scale: 34 bytes) at about a quarter; the dense side is always f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/dtype.h"

namespace snapstream::kernels {

// Rows of head_dim values in a cache's storage type.
struct KvRows {
  DType dtype = DType::F32;  // F32, F16 or Q8_0
  std::byte* data = nullptr;

  // Row `index`, row_bytes(dtype, head_dim) bytes (for Q8_0, head_dim is a multiple of 32:
  // kv_dtype_error).
  std::byte* row(int64_t index, int64_t head_dim) const { return data + index * row_bytes(dtype, head_dim); }
};

// Whether a cache can store its vectors in `dtype`.
bool is_kv_dtype(DType dtype);
// Why a cache cannot store rows of head_dim values in `dtype`; empty when it can.
std::string kv_dtype_error(DType dtype, int64_t head_dim);

// A stored row as f32, and an f32 row stored (f16 rounds to nearest even; Q8_0 as quantize_row
// does, each block's largest magnitude at ±127).
void load_row(const std::byte* row, DType dtype, int64_t head_dim, float* out);
void store_row(const float* values, DType dtype, int64_t head_dim, std::byte* row);

// Copies one token's vectors for every KV head into entry `entry` of the cache.
void write_entry(const float* token, int64_t kv_heads, int64_t head_dim, int64_t capacity, int64_t entry, KvRows cache);

// For one KV head: copies the rows of `positions` (count of them, each below `length`) out of
// the dense layout [length][kv_heads*head_dim] into consecutive entries starting at `first_entry`.
void gather_positions(const float* dense, int64_t length, int64_t kv_heads, int64_t head_dim, int64_t kv_head,
                      const int32_t* positions, int64_t count, int64_t capacity, int64_t first_entry, KvRows cache);

}  // namespace snapstream::kernels
