// Entry writes and gathers; the ring write of decode is write_entry at the ring's next entry.
#include "kernels/kv_entries.h"

#include <algorithm>

#include "kernels/errors.h"

namespace snapstream::kernels {

void write_entry(const float* token, int64_t kv_heads, int64_t head_dim, int64_t capacity, int64_t entry, float* cache) {
  require(token && cache, "write_entry", "null buffer");
  require(entry >= 0 && entry < capacity, "write_entry", "entry " + std::to_string(entry) + " outside the capacity");
  for (int64_t kv = 0; kv < kv_heads; ++kv)
    std::copy_n(token + kv * head_dim, head_dim, cache + (kv * capacity + entry) * head_dim);
}

void gather_positions(const float* dense, int64_t length, int64_t kv_heads, int64_t head_dim, int64_t kv_head,
                      const int32_t* positions, int64_t count, int64_t capacity, int64_t first_entry, float* cache) {
  require(dense && cache && (positions || count == 0), "gather_positions", "null buffer");
  require(kv_head >= 0 && kv_head < kv_heads, "gather_positions", "KV head out of range");
  require(first_entry >= 0 && count >= 0 && first_entry + count <= capacity, "gather_positions", "entries outside the capacity");
  for (int64_t i = 0; i < count; ++i) {
    require(positions[i] >= 0 && positions[i] < length, "gather_positions", "position outside the dense rows");
    std::copy_n(dense + (positions[i] * kv_heads + kv_head) * head_dim, head_dim,
                cache + (kv_head * capacity + first_entry + i) * head_dim);
  }
}

}  // namespace snapstream::kernels
