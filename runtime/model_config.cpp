// Validation of model shapes, with limits that keep every derived size far from overflow.
#include "runtime/model_config.h"

#include <cmath>

#include "runtime/errors.h"

namespace snapstream {
namespace {
void check_range(const char* field, int64_t value, int64_t max) {
  if (value <= 0 || value > max)
    throw ConfigError(std::string(field) + " = " + std::to_string(value) + " is outside 1.." + std::to_string(max));
}
}  // namespace

void ModelConfig::validate() const {
  check_range("dim", dim, 1 << 16);
  check_range("hidden_dim", hidden_dim, 1 << 18);
  check_range("n_layers", n_layers, 1024);
  check_range("n_heads", n_heads, 1024);
  check_range("n_kv_heads", n_kv_heads, 1024);
  check_range("vocab_size", vocab_size, 1 << 22);
  check_range("context_length", context_length, 1 << 22);
  if (dim % n_heads != 0) throw ConfigError("dim " + std::to_string(dim) + " is not divisible by n_heads " + std::to_string(n_heads));
  if (n_heads % n_kv_heads != 0)
    throw ConfigError("n_heads " + std::to_string(n_heads) + " is not a multiple of n_kv_heads " + std::to_string(n_kv_heads));
  if (head_dim() % 2 != 0) throw ConfigError("head_dim " + std::to_string(head_dim()) + " must be even for RoPE");
  if (!(rope_theta > 0.0f) || !std::isfinite(rope_theta)) throw ConfigError("rope_theta must be a positive number");
  if (!(norm_eps > 0.0f) || !std::isfinite(norm_eps)) throw ConfigError("norm_eps must be a positive number");
}

}  // namespace snapstream
