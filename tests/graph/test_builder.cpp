// The Llama decoder graph: its ops per layer, tensor-parallel shards and bucket lookup.
#include <catch2/catch.hpp>

#include "graph/decoder_builder.h"
#include "graph/errors.h"
#include "graph/graph_cache.h"
#include "graph/model_config_file.h"
#include "tests/support/test_paths.h"

using namespace snapstream::graph;

namespace {
// The real test model's shape, from its shipped config, with a cache of 128 entries.
ModelShape stories_shape() {
  ModelShape s = read_model_config(snapstream::test::configs_dir() / "models" / "stories260k.json");
  s.kv_capacity = 128;
  return s;
}

int64_t count(const Graph& g, OpKind kind) {
  int64_t n = 0;
  for (const Op& op : g.flattened()) n += op.kind == kind;
  return n;
}
}  // namespace

TEST_CASE("the decode graph has one attention and seven matmuls per layer", "[graph]") {
  const Graph g = build_decoder_graph(stories_shape(), {Phase::Decode, 4, 1});
  CHECK(count(g, OpKind::DecodeAttention) == 5);
  CHECK(count(g, OpKind::CausalAttention) == 0);
  CHECK(count(g, OpKind::MatMul) == 5 * 7 + 1);
  CHECK(count(g, OpKind::AllReduce) == 0);
  CHECK(g.ops.front().kind == OpKind::Embed);
  const Tensor& logits = g.tensors[static_cast<size_t>(g.ops.back().outputs[0])];
  CHECK(logits.shape == std::vector<int64_t>{4, 512});
  CHECK(logits.role == TensorRole::Output);
}

TEST_CASE("a prefill graph attends causally and keeps one row of logits", "[graph]") {
  const Graph g = build_decoder_graph(stories_shape(), {Phase::Prefill, 1, 128});
  CHECK(count(g, OpKind::CausalAttention) == 5);
  const Tensor& logits = g.tensors[static_cast<size_t>(g.ops.back().outputs[0])];
  CHECK(logits.shape == std::vector<int64_t>{1, 512});
  CHECK(g.tensors[0].shape == std::vector<int64_t>{128, 64});
}

TEST_CASE("a verify graph attends causally and keeps logits for every position it checks", "[graph]") {
  // Two sequences, each checking four draft tokens plus the position before them.
  const Graph g = build_decoder_graph(stories_shape(), {Phase::Verify, 2, 5});
  CHECK(count(g, OpKind::CausalAttention) == 5);
  CHECK(count(g, OpKind::DecodeAttention) == 0);
  const Tensor& logits = g.tensors[static_cast<size_t>(g.ops.back().outputs[0])];
  CHECK(logits.shape == std::vector<int64_t>{10, 512});
  for (const Op& op : g.flattened()) CHECK_FALSE(op.last_row_only);
  CHECK(phase_name(Phase::Verify) == "verify");
}

TEST_CASE("tensor parallelism splits heads and MLP columns and all-reduces twice per layer", "[graph]") {
  const int32_t shards = GENERATE(2, 4);
  const Graph g = build_decoder_graph(stories_shape(), {Phase::Decode, 1, 1}, shards);
  CHECK(count(g, OpKind::AllReduce) == 2 * 5);
  CHECK(count(g, OpKind::DecodeAttention) == 5 * shards);
  CHECK(count(g, OpKind::MatMul) == 5 * 7 * shards + shards);  // the output head splits by vocabulary
  CHECK(count(g, OpKind::AllGather) == 1);
  for (const Op& op : g.flattened()) {
    if (op.kind == OpKind::DecodeAttention) {
      CHECK(op.head_end - op.head_begin == 8 / shards);
      CHECK(op.kv_head_end - op.kv_head_begin == 4 / shards);
    }
    if (op.kind == OpKind::MatMul && op.weight.kind == WeightKind::Down) CHECK(op.weight.col_end - op.weight.col_begin == 172 / shards);
  }
  CHECK_THROWS_AS(build_decoder_graph(stories_shape(), {Phase::Decode, 1, 1}, 3), GraphError);
}

TEST_CASE("for the CPU engine, weights that round their input split the projections back by rows over gathered rows", "[graph]") {
  const int32_t shards = GENERATE(2, 4);
  ModelShape quantised = stories_shape();
  quantised.weight_dtype = snapstream::kernels::DType::Q8_0;
  const Graph g = build_decoder_graph(quantised, {Phase::Decode, 1, 1}, shards, AttentionSplit::Heads, true);
  // Per layer: the attention output and the MLP gates gathered whole, and each projection's
  // output slices joined; then the vocabulary.
  CHECK(count(g, OpKind::AllReduce) == 0);
  CHECK(count(g, OpKind::AllGather) == 4 * 5 + 1);
  for (const Op& op : g.flattened())
    if (op.kind == OpKind::MatMul && (op.weight.kind == WeightKind::Wo || op.weight.kind == WeightKind::Down)) {
      CHECK(op.weight.col_end == op.weight.col_begin);  // every column: whole dot products
      CHECK(op.weight.row_end - op.weight.row_begin == quantised.dim / shards);
    }
  quantised.dim = 66;  // the outputs must split evenly
  CHECK_THROWS_WITH(build_decoder_graph(quantised, {Phase::Decode, 1, 1}, 4, AttentionSplit::Heads, true), Catch::Contains("model width"));
  // Priced for an accelerator, the same weights keep the column split and its all-reduces.
  quantised.dim = 64;
  CHECK(count(build_decoder_graph(quantised, {Phase::Decode, 1, 1}, shards), OpKind::AllReduce) == 2 * 5);
}

TEST_CASE("with more shards than KV heads, shards share a KV head and the CPU engine's prefill gathers the group's queries", "[graph]") {
  ModelShape shape = stories_shape();
  shape.kv_heads = 2;  // 8 query heads in 2 groups over 4 shards
  const Graph prefill = build_decoder_graph(shape, {Phase::Prefill, 1, 64}, 4, AttentionSplit::Heads, true);
  CHECK(count(prefill, OpKind::AllGather) == 5 + 1);  // every shard's queries per layer, then the logits
  int64_t attentions = 0;
  for (const Op& op : prefill.flattened()) {
    if (op.kind != OpKind::CausalAttention) continue;
    ++attentions;
    CHECK(op.kv_head_begin == op.shard / 2);  // shards 0 and 1 share KV head 0, 2 and 3 KV head 1
    CHECK(op.kv_head_end - op.kv_head_begin == 1);
    REQUIRE(op.inputs.size() == 4);
    CHECK(prefill.tensors[static_cast<size_t>(op.inputs[3])].shape.back() == shape.heads * shape.head_dim);
  }
  CHECK(attentions == 5 * 4);
  // Decode reads the cache only; a priced graph and an even KV split gather no queries.
  CHECK(count(build_decoder_graph(shape, {Phase::Decode, 1, 1}, 4, AttentionSplit::Heads, true), OpKind::AllGather) == 1);
  CHECK(count(build_decoder_graph(shape, {Phase::Prefill, 1, 64}, 4), OpKind::AllGather) == 1);
  CHECK(count(build_decoder_graph(shape, {Phase::Prefill, 1, 64}, 2, AttentionSplit::Heads, true), OpKind::AllGather) == 1);
}

TEST_CASE("the graph cache compiles every bucket once and looks up the smallest that fits", "[graph]") {
  const GraphCache cache(stories_shape(), {{1, 2, 4, 8}, {128, 512}}, {});
  CHECK(cache.compiles() == 6);
  CHECK(cache.decode(1).key.batch == 1);
  CHECK(cache.decode(3).key.batch == 4);
  CHECK(cache.decode(8).key.batch == 8);
  CHECK_THROWS_AS(cache.decode(9), GraphError);
  CHECK(cache.prefill(1).key.length == 128);
  CHECK(cache.prefill(129).key.length == 512);
  CHECK_THROWS_AS(cache.prefill(513), GraphError);
  CHECK(cache.compiles() == 6);  // lookups never compile
  CHECK(cache.describe().find("decode batch 4 length 1") != std::string::npos);
}

TEST_CASE("data-parallel latent attention gives each shard its own sequences, every head and every attention weight", "[graph]") {
  ModelShape deepseek = read_model_config(snapstream::test::configs_dir() / "models" / "deepseek-r1-671b.json");
  deepseek.kv_capacity = 256;
  const int32_t shards = 4;
  // Ten sequences over four shards: each attends ceil(10 / 4) = 3.
  const Graph g = build_decoder_graph(deepseek, {Phase::Decode, 10, 1}, shards, AttentionSplit::Sequences);
  const int64_t layers = deepseek.layers;
  CHECK(count(g, OpKind::LatentAttention) == layers * shards);
  CHECK(count(g, OpKind::ReduceScatter) == 0);
  // One gather of the attention outputs and one sum after the MLP or experts per layer, and
  // the logits' gather.
  CHECK(count(g, OpKind::AllGather) == layers + 1);
  CHECK(count(g, OpKind::AllReduce) == layers);
  for (const Op& op : g.flattened()) {
    if (op.kind == OpKind::LatentAttention) {
      CHECK(op.sequence_shards == shards);
      CHECK(op.position_shards == 1);
      CHECK(op.head_end - op.head_begin == deepseek.heads);
      CHECK(g.tensors[static_cast<size_t>(op.inputs[0])].shape.front() == 3);
    }
    if (op.kind == OpKind::MatMul && op.weight.kind == WeightKind::Wo) CHECK(op.weight.col_end - op.weight.col_begin == deepseek.heads * deepseek.mla.v_head_dim);
  }
  CHECK_THROWS_WITH(build_decoder_graph(stories_shape(), {Phase::Decode, 4, 1}, 2, AttentionSplit::Sequences),
                    Catch::Contains("latent attention only"));
}
