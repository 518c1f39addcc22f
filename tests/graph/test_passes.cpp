// Layer fusion, kernel looping and memory planning keep the computation and shrink the launches.
#include <catch2/catch.hpp>

#include "graph/decoder_builder.h"
#include "graph/passes.h"
#include "tests/support/test_models.h"

using namespace snapstream::graph;

namespace {
// The shared tiny test shape, six layers deep so looping has a run to fold.
ModelShape small_shape() {
  ModelShape s = snapstream::test::tiny_model_shape();
  s.layers = 6;
  s.kv_capacity = 32;
  return s;
}

std::vector<std::pair<OpKind, int64_t>> signature(const std::vector<Op>& ops) {
  std::vector<std::pair<OpKind, int64_t>> out;
  for (const Op& op : ops) out.emplace_back(op.kind, op.layer);
  return out;
}
}  // namespace

TEST_CASE("fusion makes one kernel per layer, and looping makes one for all layers", "[passes]") {
  const Graph built = build_decoder_graph(small_shape(), {Phase::Decode, 2, 1});
  Graph fused = built;
  fuse_layers(fused);
  CHECK(fused.kernel_calls() == 6 + 3);  // embed, six layers, final norm, logits
  for (const Op& op : fused.ops)
    if (op.kind == OpKind::FusedLayer) CHECK(op.body.size() == 14);  // 2 norms, 7 matmuls, rope, attention, swiglu, 2 adds
  Graph looped = fused;
  loop_layers(looped);
  CHECK(looped.kernel_calls() == 1 + 3);
  REQUIRE(looped.ops[1].kind == OpKind::LoopedLayers);
  CHECK(looped.ops[1].loop_count == 6);
  // Both run exactly the ops the builder made, in order, for the right layers.
  CHECK(signature(fused.flattened()) == signature(built.ops));
  CHECK(signature(looped.flattened()) == signature(built.ops));
}

TEST_CASE("memory planning never overlaps tensors that are alive together", "[passes]") {
  const bool looping = GENERATE(false, true);
  const Graph g = compile(small_shape(), {Phase::Prefill, 1, 64}, {2, looping});
  const auto order = g.flattened();
  std::vector<std::pair<size_t, size_t>> life(g.tensors.size(), {SIZE_MAX, 0});
  for (size_t i = 0; i < order.size(); ++i)
    for (const auto* list : {&order[i].inputs, &order[i].outputs})
      for (int32_t t : *list) {
        auto& [first, last] = life[static_cast<size_t>(t)];
        first = std::min(first, i);
        last = std::max(last, i);
      }
  int64_t total = 0;
  for (size_t a = 0; a < g.tensors.size(); ++a) {
    const Tensor& ta = g.tensors[a];
    if (life[a].first == SIZE_MAX || !ta.in_arena()) continue;
    REQUIRE(ta.offset >= 0);
    CHECK(ta.offset % 64 == 0);
    CHECK(ta.offset + ta.bytes() <= g.arena_bytes);
    total += ta.bytes();
    for (size_t b = a + 1; b < g.tensors.size(); ++b) {
      const Tensor& tb = g.tensors[b];
      if (life[b].first == SIZE_MAX || !tb.in_arena()) continue;
      const bool together = life[a].first <= life[b].second && life[b].first <= life[a].second;
      const bool overlap = ta.offset < tb.offset + tb.bytes() && tb.offset < ta.offset + ta.bytes();
      INFO(ta.name << " and " << tb.name);
      REQUIRE_FALSE((together && overlap));
    }
  }
  CHECK(g.arena_bytes < total);  // space is reused across layers
}
