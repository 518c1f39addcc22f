// The SnapStream cache policy: capacity C = sink S + compressed K + ring R entries per sequence,
// per layer and per KV head, plus the SnapKV selection settings.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/dtype.h"
#include "kernels/snapkv.h"

namespace snapstream::runtime {

enum class PositionMode : uint8_t {
  Original,   // keys keep the RoPE of their absolute position (as SnapKV does)
  Reindexed,  // keys are rotated by their rank in the cache (StreamingLLM style)
};

// How the K compressed entries are filled from a prompt longer than the capacity: by SnapKV's
// attention votes, or (a baseline for evaluation) by positions drawn at random.
enum class Selection : uint8_t { SnapKV, Random };

struct SnapStreamConfig {
  bool full_cache = false;  // capacity = the context length and nothing is ever evicted (the baseline)
  int64_t capacity = 0;     // C; 0 means context_length / 4
  int64_t sink = 4;         // S: the first prompt positions, never evicted
  int64_t ring = 0;         // R; 0 means C / 2
  int64_t window = 32;      // W: the last prompt queries that vote
  int64_t pool_kernel = 7;  // odd width of the 1-D pooling
  kernels::PoolKind pool = kernels::PoolKind::Max;
  PositionMode positions = PositionMode::Original;
  Selection selection = Selection::SnapKV;
  uint64_t selection_seed = 0;  // Random: the same seed and prompt length draw the same positions
  // How cached keys and values are stored: F16 (llama.cpp's default too), or F32 at twice the
  // memory. Attention computes in f32 either way; the new token's own key and value join unrounded.
  kernels::DType kv_dtype = kernels::DType::F16;

  int64_t compressed() const { return capacity - sink - ring; }  // K

  // This config with defaults filled in for a model of `context_length`; throws ConfigError
  // when the parts do not fit (S + R > C, even pooling width, ...).
  SnapStreamConfig resolved(int64_t context_length) const;

  std::string describe() const;
};

}  // namespace snapstream::runtime
