// Compiler passes over a built graph, and compile(), which runs them in order.
#pragma once

#include "graph/ir.h"
#include "graph/model_shape.h"

namespace snapstream::graph {

// Groups each decoder layer's ops into one FusedLayer op: the unit run as one kernel.
void fuse_layers(Graph& graph);

// Turns each run of consecutive fused layers that differ only in their layer index into one
// LoopedLayers op whose body (the first layer's) runs once per layer: one kernel call and
// one synchronisation for the whole run instead of one per layer.
void loop_layers(Graph& graph);

// Gives every arena tensor a fixed byte offset in one arena, reusing space between tensors
// whose lifetimes do not overlap, and sets graph.arena_bytes.
void plan_memory(Graph& graph);

struct CompileOptions {
  int32_t shards = 1;
  bool kernel_looping = true;
  AttentionSplit attention_split = AttentionSplit::Heads;
  bool exact_split = false;  // see build_decoder_graph: the CPU engine's split
};

// build_decoder_graph, then fuse_layers, loop_layers (unless disabled) and plan_memory.
Graph compile(const ModelShape& shape, const GraphKey& key, const CompileOptions& options = {});

}  // namespace snapstream::graph
