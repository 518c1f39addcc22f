// A model as the simulator sees it: a decoder shape read from configs/models, no weights.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "graph/decoder_shape.h"

namespace snapstream::dataflow_sim {

struct ModelSpec {
  std::string name;
  graph::DecoderShape shape;  // kv_capacity is left 0: the simulation sets it
  int64_t context_length = 0;
};

// Reads a model config (Llama or DeepSeek architecture). Throws SpecError naming the file.
ModelSpec load_model_spec(const std::filesystem::path& path);

}  // namespace snapstream::dataflow_sim
