// A dense key/value cache for one sequence: every past position of every layer, in f32.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/model_config.h"

namespace snapstream {

class DenseKvCache {
 public:
  // Room for `capacity` positions (at most the model's context length).
  DenseKvCache(const ModelConfig& config, int64_t capacity);

  int64_t capacity() const { return capacity_; }
  int64_t bytes() const { return static_cast<int64_t>((keys_.size() + values_.size()) * sizeof(float)); }
  // [capacity][kv_dim] rows of one layer; row p holds position p (keys after RoPE).
  float* keys(int64_t layer) { return keys_.data() + layer * layer_stride_; }
  float* values(int64_t layer) { return values_.data() + layer * layer_stride_; }

 private:
  int64_t capacity_;
  int64_t layer_stride_;
  std::vector<float> keys_;
  std::vector<float> values_;
};

}  // namespace snapstream
