// Per-op counts. A multiply-add is two FLOPs; softmax is counted at five FLOPs per score.
#include "dataflow_sim/op_cost.h"

#include <algorithm>
#include <cmath>

#include "dataflow_sim/errors.h"
#include "kernels/dtype.h"

namespace snapstream::dataflow_sim {
namespace {

using graph::OpKind;

constexpr double kSoftmaxFlopsPerScore = 5;
constexpr double kAccountedSoftmaxFlopsPerScore = 3;

struct Sizes {
  const graph::Graph& g;
  const DeviceSpec& device;

  double rows(int32_t t) const { return static_cast<double>(g.tensors[static_cast<size_t>(t)].shape.front()); }
  double width(int32_t t) const { return static_cast<double>(g.tensors[static_cast<size_t>(t)].shape.back()); }
  double activation(int32_t t) const { return rows(t) * width(t) * device.activation_bytes; }
  // Bytes of `count` weight rows of `cols` values each, in the model's weight dtype.
  double weight_rows(double count, int64_t cols) const {
    return count * static_cast<double>(kernels::row_bytes(g.shape.weight_dtype, cols));
  }
  double kv_value_bytes() const { return kernels::bytes_per_element(g.shape.kv_dtype); }
  // Double-buffered tile of weight rows.
  double weight_tile(double count, int64_t cols) const {
    return 2 * weight_rows(std::min<double>(count, static_cast<double>(device.weight_tile_rows)), cols);
  }
};

double ceil_div(double a, double b) { return std::ceil(a / b); }

}  // namespace

OpCost op_cost(const graph::Graph& g, const graph::Op& op, const DeviceSpec& device, int64_t extent, int64_t capacity,
               const ExpertLoad* load) {
  const Sizes z{g, device};
  const graph::ModelShape& s = g.shape;
  const bool decode = g.key.phase == graph::Phase::Decode;
  const double batch = static_cast<double>(g.key.batch), length = static_cast<double>(g.key.length);
  const double heads = static_cast<double>(op.head_end - op.head_begin);
  const double parts = static_cast<double>(op.inputs.size());
  OpCost c;
  for (const int32_t t : op.inputs) c.activation_bytes += z.activation(t);
  for (const int32_t t : op.outputs) c.activation_bytes += z.activation(t);
  switch (op.kind) {
    case OpKind::Embed:
      c.dense_accounting_flops = 2 * z.rows(op.outputs[0]) * static_cast<double>(s.vocab) * static_cast<double>(s.dim);
      c.weight_bytes = z.weight_rows(z.rows(op.outputs[0]), s.dim);
      c.resident_bytes = z.weight_rows(static_cast<double>(s.vocab) / g.shards, s.dim);
      break;
    case OpKind::RmsNorm:
      c.flops = 4 * z.rows(op.outputs[0]) * static_cast<double>(s.dim);
      c.weight_bytes = c.resident_bytes = static_cast<double>(s.dim) * device.activation_bytes;
      break;
    case OpKind::MatMul: {
      const double m = z.rows(op.inputs[0]), in = z.width(op.inputs[0]), out = z.width(op.outputs[0]);
      c.flops = 2 * m * in * out;
      const bool key_or_value = op.weight.kind == graph::WeightKind::Wk || op.weight.kind == graph::WeightKind::Wv;
      c.dense_accounting_flops = key_or_value ? c.flops * static_cast<double>(s.heads) / static_cast<double>(s.kv_heads) : c.flops;
      c.weight_bytes = c.resident_bytes = z.weight_rows(out, static_cast<int64_t>(in));
      c.tile_bytes = z.weight_tile(out, static_cast<int64_t>(in));
      break;
    }
    case OpKind::HeadMatMul: {
      const double m = z.rows(op.inputs[0]), slice_rows = static_cast<double>(op.weight.row_end - op.weight.row_begin);
      c.flops = c.dense_accounting_flops = 2 * m * slice_rows * static_cast<double>(s.mla.kv_lora_rank);
      c.weight_bytes = c.resident_bytes = z.weight_rows(slice_rows, s.mla.kv_lora_rank);
      c.tile_bytes = z.weight_tile(slice_rows, s.mla.kv_lora_rank);
      break;
    }
    case OpKind::Rope:
      c.flops = 3 * (z.rows(op.inputs[0]) * z.width(op.inputs[0]) + z.rows(op.inputs[1]) * z.width(op.inputs[1]));
      break;
    case OpKind::SwiGLU:
      c.flops = 5 * z.rows(op.inputs[0]) * z.width(op.inputs[0]);
      break;
    case OpKind::Add:
      c.flops = z.rows(op.inputs[0]) * z.width(op.inputs[0]);
      break;
    case OpKind::DecodeAttention:
    case OpKind::CausalAttention: {
      const double kv_heads = static_cast<double>(op.kv_head_end - op.kv_head_begin), hd = static_cast<double>(s.head_dim);
      const double per_position = 2 * kv_heads * hd * z.kv_value_bytes();
      // Scores against every visible position, then the weighted sum of values.
      const double scores = decode ? batch * (static_cast<double>(extent) + 1)
                                   : batch * (length * static_cast<double>(extent) + length * (length + 1) / 2);
      c.flops = heads * scores * (4 * hd + kSoftmaxFlopsPerScore);
      c.dense_accounting_flops = heads * scores * (4 * hd + kAccountedSoftmaxFlopsPerScore);
      // Each sequence's cached positions are read once, whatever the new rows (a chunk of a
      // prompt or a speculative verify attends them too), and its new positions written.
      c.kv_bytes = batch * (static_cast<double>(extent) + length) * per_position;
      c.kv_held_per_sequence = static_cast<double>(capacity) * per_position;
      c.tile_bytes = 2 * static_cast<double>(device.kv_tile_positions) * per_position +
                     heads * static_cast<double>(device.kv_tile_positions) * 4;
      break;
    }
    case OpKind::LatentAttention: {
      const double shards = static_cast<double>(op.position_shards), cached = static_cast<double>(s.mla.cached_width());
      const double per_position = cached * z.kv_value_bytes();
      // Split by position, every device attends every sequence; split by sequence (data
      // parallel), a device attends its own ceil(batch / shards) with their whole caches.
      const double sequences = ceil_div(batch, static_cast<double>(op.sequence_shards));
      const double positions = decode ? ceil_div(static_cast<double>(extent) + 1, shards) : 0;
      const double scores = decode ? sequences * positions
                                   : sequences * (length * static_cast<double>(extent) + length * (length + 1) / 2) / shards;
      c.flops = heads * scores * (2 * cached + 2 * static_cast<double>(s.mla.kv_lora_rank) + kSoftmaxFlopsPerScore);
      c.dense_accounting_flops = c.flops;
      c.kv_bytes = sequences * ceil_div(static_cast<double>(extent) + length, shards) * per_position;
      c.kv_held_per_sequence = ceil_div(static_cast<double>(capacity), shards) * per_position / static_cast<double>(op.sequence_shards);
      c.tile_bytes = 2 * static_cast<double>(device.kv_tile_positions) * per_position +
                     heads * static_cast<double>(device.kv_tile_positions) * 4;
      break;
    }
    case OpKind::MoeExperts: {
      // Counted in whole experts: the column slice this op holds is 1/shards of each.
      const ExpertLoad uniform = load != nullptr ? ExpertLoad{} : busiest_device_load(s, static_cast<int64_t>(z.rows(op.inputs[0])), g.shards, {}, device);
      const ExpertLoad& l = load != nullptr ? *load : uniform;
      const int64_t whole = s.moe.expert_hidden_dim;
      c.flops = c.dense_accounting_flops = l.token_experts * 6 * static_cast<double>(s.dim) * static_cast<double>(whole);
      c.expert_bytes = l.experts_read * expert_weight_bytes(s, whole);
      c.resident_bytes = l.experts_held * expert_weight_bytes(s, whole);
      const double tile_width = l.whole_experts ? static_cast<double>(whole) : static_cast<double>(op.weight.row_end - op.weight.row_begin);
      c.tile_bytes = 3 * z.weight_tile(tile_width, s.dim);
      break;
    }
    case OpKind::AllReduce:
    case OpKind::AllGather:
      c.collective_payload = z.activation(op.outputs[0]);
      c.collective_parts = static_cast<int64_t>(parts);
      break;
    case OpKind::ReduceScatter:
      c.collective_payload = z.activation(op.inputs[0]);
      c.collective_parts = static_cast<int64_t>(parts);
      break;
    case OpKind::FusedLayer:
    case OpKind::LoopedLayers:
      throw SimulationError("op_cost prices single ops; a layer kernel is priced op by op");
  }
  return c;
}

}  // namespace snapstream::dataflow_sim
