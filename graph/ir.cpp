// Names, sizes and traversal of the graph IR.
#include "graph/ir.h"

namespace snapstream::graph {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::Prefill: return "prefill";
    case Phase::Decode: return "decode";
    case Phase::Verify: return "verify";
  }
  return "unknown";
}

std::string_view weight_kind_name(WeightKind kind) {
  switch (kind) {
    case WeightKind::Embedding: return "embedding";
    case WeightKind::AttentionNorm: return "attention_norm";
    case WeightKind::Wq: return "wq";
    case WeightKind::Wk: return "wk";
    case WeightKind::Wv: return "wv";
    case WeightKind::Wo: return "wo";
    case WeightKind::MlpNorm: return "mlp_norm";
    case WeightKind::Gate: return "gate";
    case WeightKind::Up: return "up";
    case WeightKind::Down: return "down";
    case WeightKind::FinalNorm: return "final_norm";
    case WeightKind::Output: return "output";
    case WeightKind::QDown: return "q_down";
    case WeightKind::QUp: return "q_up";
    case WeightKind::KvDown: return "kv_down";
    case WeightKind::KvUpKey: return "kv_up_key";
    case WeightKind::KvUpValue: return "kv_up_value";
    case WeightKind::Router: return "router";
    case WeightKind::Experts: return "experts";
  }
  return "unknown";
}

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::Embed: return "embed";
    case OpKind::RmsNorm: return "rmsnorm";
    case OpKind::MatMul: return "matmul";
    case OpKind::Rope: return "rope";
    case OpKind::CausalAttention: return "causal_attention";
    case OpKind::DecodeAttention: return "decode_attention";
    case OpKind::SwiGLU: return "swiglu";
    case OpKind::Add: return "add";
    case OpKind::AllReduce: return "all_reduce";
    case OpKind::AllGather: return "all_gather";
    case OpKind::ReduceScatter: return "reduce_scatter";
    case OpKind::HeadMatMul: return "head_matmul";
    case OpKind::LatentAttention: return "latent_attention";
    case OpKind::MoeExperts: return "moe_experts";
    case OpKind::FusedLayer: return "fused_layer";
    case OpKind::LoopedLayers: return "looped_layers";
  }
  return "unknown";
}

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t Tensor::bytes() const { return kernels::row_bytes(dtype, elements()); }

int32_t Graph::add_tensor(Tensor tensor) {
  tensors.push_back(std::move(tensor));
  return static_cast<int32_t>(tensors.size() - 1);
}

namespace {
void flatten_into(const Op& op, int64_t layer_offset, std::vector<Op>& out) {
  switch (op.kind) {
    case OpKind::FusedLayer:
      for (const Op& inner : op.body) flatten_into(inner, layer_offset, out);
      return;
    case OpKind::LoopedLayers:
      for (int64_t i = 0; i < op.loop_count; ++i)
        for (const Op& inner : op.body) flatten_into(inner, op.first_layer + i - inner.layer, out);
      return;
    default: {
      Op copy = op;
      copy.layer = op.layer + layer_offset;
      copy.body.clear();
      out.push_back(std::move(copy));
    }
  }
}
}  // namespace

std::vector<Op> Graph::flattened() const {
  std::vector<Op> out;
  for (const Op& op : ops) flatten_into(op, 0, out);
  return out;
}

int64_t Graph::kernel_calls() const { return static_cast<int64_t>(ops.size()); }

}  // namespace snapstream::graph
