// Defaults and validation of the SnapStream policy (the defaults of docs' SNAPSTREAM.md).
#include "runtime/snapstream_config.h"

#include <algorithm>

#include "kernels/kv_entries.h"
#include "runtime/errors.h"

namespace snapstream::runtime {

SnapStreamConfig SnapStreamConfig::resolved(int64_t context_length) const {
  SnapStreamConfig c = *this;
  if (context_length <= 0) throw ConfigError("the model's context length must be positive");
  if (!kernels::is_kv_dtype(c.kv_dtype))
    throw ConfigError("the KV cache stores f32, f16 or q8_0, not " + std::string(kernels::dtype_name(c.kv_dtype)));
  if (c.full_cache) {
    // One region holding every position in order: nothing to select, nothing to evict.
    c.capacity = context_length;
    c.sink = 0;
    c.ring = context_length;
    return c;
  }
  if (c.capacity == 0) c.capacity = std::max<int64_t>(1, context_length / 4);
  if (c.ring == 0) c.ring = c.capacity / 2;
  if (c.capacity < 1 || c.capacity > context_length)
    throw ConfigError("kv capacity " + std::to_string(c.capacity) + " must be within 1.." + std::to_string(context_length));
  if (c.sink < 0 || c.ring < 1 || c.sink + c.ring > c.capacity)
    throw ConfigError("sink (" + std::to_string(c.sink) + ") + ring (" + std::to_string(c.ring) + ") must fit the capacity " +
                      std::to_string(c.capacity) + ", with a ring of at least one slot");
  if (c.window < 1) throw ConfigError("the observation window must hold at least one query");
  if (c.pool_kernel < 1 || c.pool_kernel % 2 == 0)
    throw ConfigError("the pooling kernel must be a positive odd width, got " + std::to_string(c.pool_kernel));
  return c;
}

std::string SnapStreamConfig::describe() const {
  const std::string storage = kv_dtype == kernels::DType::F32 ? "" : ", " + std::string(kernels::dtype_name(kv_dtype)) + " KV";
  if (full_cache) return "full cache (" + std::to_string(capacity) + " positions, no eviction)" + storage;
  return "SnapStream C=" + std::to_string(capacity) + " (sink " + std::to_string(sink) + ", compressed " +
         std::to_string(compressed()) + ", ring " + std::to_string(ring) + "), window " + std::to_string(window) + ", " +
         (pool == kernels::PoolKind::Max ? "max" : "avg") + "-pool " + std::to_string(pool_kernel) + ", positions " +
         (positions == PositionMode::Original ? "original" : "reindexed") +
         (selection == Selection::Random ? ", random selection (seed " + std::to_string(selection_seed) + ")" : "") + storage;
}

}  // namespace snapstream::runtime
