// Layer fusion, kernel looping and static memory planning.
#include "graph/passes.h"

#include <algorithm>
#include <map>

#include "graph/decoder_builder.h"

namespace snapstream::graph {
namespace {

constexpr int64_t kArenaAlignment = 64;

// Two fused layers are the same kernel when their ops match in kind, weight slice, heads and
// the shapes of every tensor they touch.
bool same_kernel(const Graph& graph, const Op& a, const Op& b) {
  if (a.body.size() != b.body.size()) return false;
  auto same_tensors = [&](const std::vector<int32_t>& x, const std::vector<int32_t>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (graph.tensors[static_cast<size_t>(x[i])].shape != graph.tensors[static_cast<size_t>(y[i])].shape) return false;
    return true;
  };
  for (size_t i = 0; i < a.body.size(); ++i) {
    const Op &p = a.body[i], &q = b.body[i];
    if (p.kind != q.kind || p.shard != q.shard || p.replicated != q.replicated || p.weight.kind != q.weight.kind || p.weight.row_begin != q.weight.row_begin ||
        p.weight.row_end != q.weight.row_end || p.weight.col_begin != q.weight.col_begin || p.weight.col_end != q.weight.col_end ||
        p.head_begin != q.head_begin || p.head_end != q.head_end || p.kv_head_begin != q.kv_head_begin ||
        p.kv_head_end != q.kv_head_end || !same_tensors(p.inputs, q.inputs) || !same_tensors(p.outputs, q.outputs) ||
        !same_tensors(p.row_parts, q.row_parts))
      return false;
  }
  return true;
}

}  // namespace

void fuse_layers(Graph& graph) {
  std::vector<Op> ops;
  for (Op& op : graph.ops) {
    if (op.layer >= 0 && !ops.empty() && ops.back().kind == OpKind::FusedLayer && ops.back().layer == op.layer) {
      ops.back().body.push_back(std::move(op));
    } else if (op.layer >= 0) {
      Op fused;
      fused.kind = OpKind::FusedLayer;
      fused.layer = op.layer;
      fused.body.push_back(std::move(op));
      ops.push_back(std::move(fused));
    } else {
      ops.push_back(std::move(op));
    }
  }
  graph.ops = std::move(ops);
}

void loop_layers(Graph& graph) {
  std::vector<Op> ops;
  for (Op& op : graph.ops) {
    if (op.kind == OpKind::FusedLayer && !ops.empty()) {
      Op& last = ops.back();
      const bool extends_loop = last.kind == OpKind::LoopedLayers && last.first_layer + last.loop_count == op.layer;
      const bool starts_loop = last.kind == OpKind::FusedLayer && last.layer + 1 == op.layer;
      if ((extends_loop || starts_loop) && same_kernel(graph, last, op)) {
        if (starts_loop) {
          last.kind = OpKind::LoopedLayers;
          last.first_layer = last.layer;
          last.loop_count = 1;
        }
        ++last.loop_count;
        continue;  // the body of the first layer serves every iteration
      }
    }
    ops.push_back(std::move(op));
  }
  graph.ops = std::move(ops);
}

void plan_memory(Graph& graph) {
  const std::vector<Op> order = graph.flattened();
  std::map<int32_t, std::pair<size_t, size_t>> lifetime;  // tensor -> first and last op using it
  for (size_t i = 0; i < order.size(); ++i)
    for (const auto* list : {&order[i].inputs, &order[i].outputs, &order[i].row_parts})
      for (int32_t t : *list) {
        if (!graph.tensors[static_cast<size_t>(t)].in_arena()) continue;
        auto [it, inserted] = lifetime.try_emplace(t, i, i);
        it->second.second = i;
      }
  // The output stays readable after the run, so it lives to the end.
  for (auto& [t, span] : lifetime)
    if (graph.tensors[static_cast<size_t>(t)].role == TensorRole::Output) span.second = order.size();

  std::vector<std::pair<size_t, int32_t>> by_start;
  for (const auto& [t, span] : lifetime) by_start.emplace_back(span.first, t);
  std::sort(by_start.begin(), by_start.end());
  struct Placed {
    int64_t offset, size;
    size_t last_use;
  };
  std::vector<Placed> live;
  int64_t arena = 0;
  for (const auto& [start, t] : by_start) {
    std::erase_if(live, [start = start](const Placed& p) { return p.last_use < start; });
    std::sort(live.begin(), live.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    Tensor& tensor = graph.tensors[static_cast<size_t>(t)];
    const int64_t size = (tensor.bytes() + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    int64_t offset = 0;  // first gap that fits
    for (const Placed& p : live) {
      if (offset + size <= p.offset) break;
      offset = std::max(offset, p.offset + p.size);
    }
    tensor.offset = offset;
    live.push_back({offset, size, lifetime[t].second});
    arena = std::max(arena, offset + size);
  }
  graph.arena_bytes = arena;
}

Graph compile(const ModelShape& shape, const GraphKey& key, const CompileOptions& options) {
  Graph graph = build_decoder_graph(shape, key, options.shards, options.attention_split, options.exact_split);
  fuse_layers(graph);
  if (options.kernel_looping) loop_layers(graph);
  plan_memory(graph);
  return graph;
}

}  // namespace snapstream::graph
