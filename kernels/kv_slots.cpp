// Slot writes and gathers; the ring write of decode is write_slot at the ring's next slot.
#include "kernels/kv_slots.h"

#include <algorithm>

#include "kernels/errors.h"

namespace snapstream::kernels {

void write_slot(const float* token, int64_t kv_heads, int64_t head_dim, int64_t capacity, int64_t slot, float* cache) {
  require(token && cache, "write_slot", "null buffer");
  require(slot >= 0 && slot < capacity, "write_slot", "slot " + std::to_string(slot) + " outside the capacity");
  for (int64_t kv = 0; kv < kv_heads; ++kv)
    std::copy_n(token + kv * head_dim, head_dim, cache + (kv * capacity + slot) * head_dim);
}

void gather_positions(const float* dense, int64_t length, int64_t kv_heads, int64_t head_dim, int64_t kv_head,
                      const int32_t* positions, int64_t count, int64_t capacity, int64_t first_slot, float* cache) {
  require(dense && cache && (positions || count == 0), "gather_positions", "null buffer");
  require(kv_head >= 0 && kv_head < kv_heads, "gather_positions", "KV head out of range");
  require(first_slot >= 0 && count >= 0 && first_slot + count <= capacity, "gather_positions", "slots outside the capacity");
  for (int64_t i = 0; i < count; ++i) {
    require(positions[i] >= 0 && positions[i] < length, "gather_positions", "position outside the dense rows");
    std::copy_n(dense + (positions[i] * kv_heads + kv_head) * head_dim, head_dim,
                cache + (kv_head * capacity + first_slot + i) * head_dim);
  }
}

}  // namespace snapstream::kernels
