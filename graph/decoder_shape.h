// The numbers a Llama-family decoder graph is built from; no weights, so a graph can be built
// (and priced) for a model that exists only as a config.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace snapstream::graph {

struct DecoderShape {
  int64_t dim = 0;
  int64_t hidden_dim = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab = 0;
  int64_t kv_capacity = 0;  // cache slots per sequence, C
  kernels::DType weight_dtype = kernels::DType::F32;

  int64_t kv_dim() const { return kv_heads * head_dim; }
};

}  // namespace snapstream::graph
