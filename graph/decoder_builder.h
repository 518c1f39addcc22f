// Builds a decoder as a static graph for one (phase, batch, length) key, already split into
// `shards` tensor-parallel shards. Llama-family layers use grouped-query attention; DeepSeek
// layers use latent attention and, after the dense layers, a mixture of experts.
#pragma once

#include <cstdint>

#include "graph/ir.h"
#include "graph/model_shape.h"

namespace snapstream::graph {

// Splitting: each shard owns a contiguous range of query heads, MLP (and expert) columns and
// output-vocabulary rows; an all-reduce sums the shards after attention and after the MLP,
// and an all-gather joins the logits. With fewer KV heads than shards, each KV head is
// replicated on the shards of its query heads. Latent attention's cache is one latent per
// token shared by every head, so it is split by position instead: the shards gather every
// head's query, attend over their share of the positions, and reduce-scatter the results.
// AttentionSplit::Sequences (latent attention only) instead gives each shard every attention
// weight and its own ceil(batch / shards) sequences, whole caches included; an all-gather of
// the attention outputs gives every shard every token again before the MLP or experts.
// With `exact_split` (the CPU engine's graphs), the split computes the unsplit model's logits
// and cache bit for bit: weights that round their input rows to an 8-bit grid (the CPU
// engine's quantised types) split the projections back to the model width by rows over
// gathered input rows instead, and prefill with replicated KV heads all-gathers the queries so
// that every shard holding a KV head selects its prompt positions from the whole query group.
// Throws GraphError when the shape does not divide among the shards.
Graph build_decoder_graph(const ModelShape& shape, const GraphKey& key, int32_t shards = 1,
                          AttentionSplit split = AttentionSplit::Heads, bool exact_split = false);

}  // namespace snapstream::graph
