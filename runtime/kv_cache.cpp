// Allocation of the dense per-sequence KV cache.
#include "runtime/kv_cache.h"

#include "runtime/errors.h"

namespace snapstream {

DenseKvCache::DenseKvCache(const ModelConfig& config, int64_t capacity)
    : capacity_(capacity), layer_stride_(capacity * config.kv_dim()) {
  if (capacity <= 0 || capacity > config.context_length)
    throw InvalidRequestError("KV cache capacity " + std::to_string(capacity) + " must be within 1.." +
                              std::to_string(config.context_length) + " (the model's context length)");
  keys_.assign(static_cast<size_t>(layer_stride_ * config.n_layers), 0.0f);
  values_.assign(keys_.size(), 0.0f);
}

}  // namespace snapstream
