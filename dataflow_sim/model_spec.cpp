// Model configs into decoder shapes, for both architectures the graph builder knows.
#include "dataflow_sim/model_spec.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "dataflow_sim/errors.h"

namespace snapstream::dataflow_sim {
namespace {

using nlohmann::json;

kernels::DType parse_dtype(const std::string& name, const std::filesystem::path& path) {
  for (const kernels::DType d : {kernels::DType::F32, kernels::DType::F16, kernels::DType::BF16, kernels::DType::Q8_0})
    if (name == kernels::dtype_name(d)) return d;
  throw SpecError(path.string() + ": unknown dtype '" + name + "' (f32, f16, bf16 or q8_0)");
}

int64_t positive(const json& c, const char* key) {
  const int64_t v = c.at(key).get<int64_t>();
  if (v < 1) throw SpecError(std::string("'") + key + "' must be positive");
  return v;
}

}  // namespace

ModelSpec load_model_spec(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw SpecError("cannot open model config " + path.string());
  try {
    const json c = json::parse(in);
    ModelSpec m;
    m.name = c.value("name", path.stem().string());
    graph::DecoderShape& s = m.shape;
    s.dim = positive(c, "dim");
    s.layers = positive(c, "n_layers");
    s.heads = positive(c, "n_heads");
    s.vocab = positive(c, "vocab_size");
    m.context_length = positive(c, "context_length");
    s.weight_dtype = parse_dtype(c.value("weight_dtype", "bf16"), path);
    s.kv_dtype = parse_dtype(c.value("kv_dtype", "bf16"), path);
    const std::string architecture = c.value("architecture", "llama");
    if (architecture == "llama") {
      s.hidden_dim = positive(c, "hidden_dim");
      s.kv_heads = c.contains("n_kv_heads") ? positive(c, "n_kv_heads") : s.heads;
      s.head_dim = s.dim / s.heads;
    } else if (architecture == "deepseek") {
      const json& mla = c.at("mla");
      s.attention = graph::AttentionKind::Latent;
      s.mla = {positive(mla, "q_lora_rank"), positive(mla, "kv_lora_rank"), positive(mla, "qk_nope_head_dim"),
               positive(mla, "qk_rope_head_dim"), positive(mla, "v_head_dim")};
      const json& moe = c.at("moe");
      s.moe = {moe.at("dense_layers").get<int64_t>(), positive(moe, "expert_hidden_dim"), positive(moe, "routed_experts"),
               moe.at("shared_experts").get<int64_t>(), positive(moe, "experts_per_token")};
      s.hidden_dim = positive(moe, "dense_hidden_dim");
      if (s.moe.dense_layers < 0 || s.moe.dense_layers > s.layers || s.moe.shared_experts < 0 ||
          s.moe.experts_per_token > s.moe.routed_experts)
        throw SpecError("the moe section is inconsistent (dense layers, shared experts or experts per token)");
    } else {
      throw SpecError("unknown architecture '" + architecture + "' (llama or deepseek)");
    }
    return m;
  } catch (const json::exception& e) {
    throw SpecError(path.string() + ": " + e.what());
  } catch (const SpecError& e) {
    if (std::string(e.what()).rfind(path.string(), 0) == 0) throw;
    throw SpecError(path.string() + ": " + e.what());
  }
}

}  // namespace snapstream::dataflow_sim
