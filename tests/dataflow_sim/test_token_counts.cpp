// Bytes and FLOPs per decoded token, counted from the graph, against the Kernel Looping paper's
// Table 1 (Llama 3.1 8B, BF16, batch 1, context 4096) and the KV sizes of SN40L.md.
#include <catch2/catch.hpp>

#include "dataflow_sim/simulation.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

SimulationResult llama_8b_table_1() {
  SimulationOptions o;
  o.context = 4096;
  o.tp = 1;
  return simulate(test::model_config("llama-3.1-8b"), test::system_config("sn40l"), o);
}
}  // namespace

// The paper's "GB" are GiB: 8.03e9 BF16 parameters are 16.06e9 bytes, i.e. 14.96 GiB.
TEST_CASE("Llama 3.1 8B holds 14.9 GB of parameters and 0.5 GB of KV at context 4096", "[dataflow_sim]") {
  const SimulationResult r = llama_8b_table_1();
  CHECK(r.weight_bytes_per_socket / kGiB == Approx(14.9).epsilon(0.03));
  CHECK(r.kv_bytes_per_sequence / kGiB == Approx(0.5).epsilon(0.03));
  // Table 1's bytes per token reads every parameter and the whole cache once.
  CHECK((r.weight_bytes_per_socket + r.kv_bytes_per_sequence) / kGiB == Approx(15.4).epsilon(0.03));
}

TEST_CASE("Llama 3.1 8B streams its weights except the embedding table, plus its cache, per token", "[dataflow_sim]") {
  const SimulationResult r = llama_8b_table_1();
  const double embedding_table = 128256.0 * 4096 * 2, one_row = 4096.0 * 2;
  const double new_token_kv = 2.0 * 8 * 128 * 2 * 32;  // read along with the cache, as attention sees it too
  const double expected = r.weight_bytes_per_socket - embedding_table + one_row + r.kv_bytes_per_sequence + new_token_kv;
  CHECK(r.hbm_read_bytes_per_step == Approx(expected).epsilon(0.001));
}

// Executed FLOPs: two per multiply-add of every matmul (the embedding is a lookup), plus
// attention's scores and weighted sums over 4097 positions for 32 query heads.
TEST_CASE("Llama 3.1 8B decode executes 17.2 GFLOPs per token at context 4096", "[dataflow_sim]") {
  const SimulationResult r = llama_8b_table_1();
  const double matmul_params = 8.030261248e9 - 128256.0 * 4096 - 65 * 4096;
  const double attention = 32.0 * 32 * 4097 * (4 * 128 + 5);
  CHECK(r.flops_per_step == Approx(2 * matmul_params + attention).epsilon(0.01));
  CHECK(r.flops_per_step / 1e9 == Approx(17.2).epsilon(0.02));
}

// Table 1's 20 GFLOPs counts as Hoffmann et al. (2022, Table A4) do: the embedding as a matmul
// and K and V projections as wide as the queries, which a GQA model does not execute.
TEST_CASE("Llama 3.1 8B counts 20 GFLOPs per token the way Table 1 counts them", "[dataflow_sim]") {
  const SimulationResult r = llama_8b_table_1();
  CHECK(r.flops_per_step_dense_accounting / 1e9 == Approx(20).epsilon(0.03));
  // By hand from that table: per layer QKV 2*3*d*d, logits and values 2*2*T*d, softmax 3*h*T,
  // output 2*d*d, SwiGLU 2*3*d*f; plus embedding and logits 2*V*d each.
  const double d = 4096, f = 14336, v = 128256, t = 4097, h = 32;
  const double per_layer = 2 * 3 * d * d + 2 * 2 * t * d + 3 * h * t + 2 * d * d + 2 * 3 * d * f;
  CHECK(r.flops_per_step_dense_accounting == Approx(32 * per_layer + 2 * 2 * v * d).epsilon(0.001));
}

TEST_CASE("KV per token: 128 KiB for Llama 3.1 8B, about 70 KB for DeepSeek-R1", "[dataflow_sim]") {
  SimulationOptions o;
  o.context = 4096;
  const SimulationResult llama = simulate(test::model_config("llama-3.1-8b"), test::system_config("sn40l-16"), o);
  CHECK(llama.kv_bytes_per_token == 128 * 1024);
  const SimulationResult deepseek = simulate(test::model_config("deepseek-r1-671b"), test::system_config("sn40l-16"), o);
  CHECK(deepseek.kv_bytes_per_token == 576 * 61 * 2);  // 70,272 bytes
  CHECK(deepseek.kv_bytes_per_token / 1000 == Approx(70).epsilon(0.01));
}
