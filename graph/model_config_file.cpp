// JSON model configs into model shapes, for both architectures the graph builder knows.
#include "graph/model_config_file.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "graph/errors.h"

namespace snapstream::graph {
namespace {

using nlohmann::json;

kernels::DType parse_dtype(const std::string& name) {
  if (const auto dtype = kernels::dtype_from_name(name)) return *dtype;
  throw ShapeError("unknown dtype '" + name + "' (" + std::string(kernels::kDTypeNames) + ")");
}

void read_latent_attention(const json& c, ModelShape& s) {
  const json& mla = c.at("mla");
  s.attention = AttentionKind::Latent;
  s.mla = {mla.at("q_lora_rank").get<int64_t>(), mla.at("kv_lora_rank").get<int64_t>(), mla.at("qk_nope_head_dim").get<int64_t>(),
           mla.at("qk_rope_head_dim").get<int64_t>(), mla.at("v_head_dim").get<int64_t>()};
  const json& moe = c.at("moe");
  s.moe = {moe.at("dense_layers").get<int64_t>(), moe.at("expert_hidden_dim").get<int64_t>(), moe.at("routed_experts").get<int64_t>(),
           moe.at("shared_experts").get<int64_t>(), moe.at("experts_per_token").get<int64_t>()};
  s.hidden_dim = moe.at("dense_hidden_dim").get<int64_t>();
}

ModelShape parse(const json& c, const std::filesystem::path& path) {
  ModelShape s;
  s.name = c.value("name", path.stem().string());
  s.dim = c.at("dim").get<int64_t>();
  s.layers = c.at("n_layers").get<int64_t>();
  s.heads = c.at("n_heads").get<int64_t>();
  s.vocab = c.at("vocab_size").get<int64_t>();
  s.context_length = c.at("context_length").get<int64_t>();
  s.rope_theta = c.value("rope_theta", s.rope_theta);
  s.norm_eps = c.value("norm_eps", s.norm_eps);
  s.tied_embeddings = c.value("tied_embeddings", true);
  s.weight_dtype = parse_dtype(c.value("weight_dtype", "bf16"));
  s.kv_dtype = parse_dtype(c.value("kv_dtype", "bf16"));
  s.architecture = c.value("architecture", "llama");
  if (s.architecture == "llama" || s.architecture == "qwen2") {
    s.hidden_dim = c.at("hidden_dim").get<int64_t>();
    s.kv_heads = c.value("n_kv_heads", s.heads);
    s.head_dim = c.value("head_dim", int64_t{0});
    if (s.architecture == "qwen2") {
      s.attention_bias = true;
      s.rope_pairs = kernels::RopePairs::Halves;
    }
  } else if (s.architecture == "deepseek") {
    read_latent_attention(c, s);
  } else {
    throw ShapeError("unknown architecture '" + s.architecture + "' (llama, qwen2 or deepseek)");
  }
  s.finalise();
  return s;
}

}  // namespace

ModelShape read_model_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ShapeError("cannot open model config " + path.string());
  try {
    return parse(json::parse(in), path);
  } catch (const json::exception& e) {
    throw ShapeError(path.string() + ": " + e.what());
  } catch (const ShapeError& e) {
    throw ShapeError(path.string() + ": " + e.what());
  }
}

}  // namespace snapstream::graph
