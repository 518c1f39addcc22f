// Builds the Llama-family decoder as a static graph for one (phase, batch, length) key, already
// split into `shards` tensor-parallel shards: each shard owns a contiguous range of query and KV
// heads and of MLP columns, and an all-reduce sums the shards after attention and after the MLP.
#pragma once

#include <cstdint>

#include "graph/decoder_shape.h"
#include "graph/ir.h"

namespace snapstream::graph {

// Throws GraphError when the heads, KV heads or MLP width do not divide among the shards.
Graph build_llama_graph(const DecoderShape& shape, const GraphKey& key, int32_t shards = 1);

}  // namespace snapstream::graph
