// The head layout shared by the attention kernels: query heads grouped over KV heads (GQA).
#pragma once

#include <cstdint>

#include "kernels/errors.h"

namespace snapstream::kernels {

struct AttentionShape {
  int64_t heads = 0;     // query heads
  int64_t kv_heads = 0;  // key/value heads; heads % kv_heads == 0 (GQA)
  int64_t head_dim = 0;

  int64_t group() const { return heads / kv_heads; }  // query heads per KV head
  int64_t q_width() const { return heads * head_dim; }
  int64_t kv_width() const { return kv_heads * head_dim; }

  void check(const char* kernel) const {
    require(heads > 0 && kv_heads > 0 && head_dim > 0 && heads % kv_heads == 0, kernel,
            "heads must be a positive multiple of kv_heads, and head_dim positive");
  }
};

}  // namespace snapstream::kernels
