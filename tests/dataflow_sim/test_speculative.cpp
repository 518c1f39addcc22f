// Speculative decoding in the pricing: the expected yield of a round against a closed form and
// a sampled one, the draft's checks, and the properties a round's price must keep.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/simulation.h"
#include "dataflow_sim/speculative.h"
#include "tests/dataflow_sim/sim_fixtures.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

namespace {

SpeculativeSpec llama_draft(int64_t k, std::vector<double> acceptance) {
  return {test::model_config("llama-1b"), k, std::move(acceptance)};
}

SimulationOptions at(int64_t context, int64_t batch) {
  SimulationOptions o;
  o.context = context;
  o.batch = batch;
  return o;
}

}  // namespace

TEST_CASE("a round yields 1 + a + a^2 + ... + a^k tokens, as sampled rounds do", "[dataflow_sim][speculative]") {
  for (const double a : {0.0, 0.3, 0.8, 1.0}) {
    for (const int64_t k : {1, 4, 7}) {
      const double closed = a == 1.0 ? static_cast<double>(k + 1) : (1 - std::pow(a, static_cast<double>(k + 1))) / (1 - a);
      CHECK(expected_tokens_per_round(llama_draft(k, {a})) == Approx(closed).epsilon(1e-12));
    }
  }
  // Position-dependent acceptance: each round draws until the first rejection, then adds the
  // target's own token.
  const std::vector<double> curve = {0.9, 0.7, 0.5, 0.2};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const int rounds = 200000;
  double tokens = 0;
  for (int i = 0; i < rounds; ++i) {
    int accepted = 0;
    while (accepted < static_cast<int>(curve.size()) && u(rng) < curve[static_cast<size_t>(accepted)]) ++accepted;
    tokens += accepted + 1;
  }
  CHECK(expected_tokens_per_round(llama_draft(4, curve)) == Approx(tokens / rounds).epsilon(0.01));
}

TEST_CASE("a draft that cannot serve the target is refused with the reason", "[dataflow_sim][speculative]") {
  const graph::ModelShape target = test::model_config("llama-3.1-8b");
  using Catch::Contains;
  CHECK_THROWS_WITH(validate_speculative(llama_draft(0, {0.5}), target), Contains("at least one draft token"));
  CHECK_THROWS_WITH(validate_speculative(llama_draft(4, {0.5, 0.5}), target), Contains("one per draft token (4), not 2"));
  CHECK_THROWS_WITH(validate_speculative(llama_draft(2, {0.5, 1.5}), target), Contains("[0, 1]"));
  CHECK_THROWS_WITH(validate_speculative(llama_draft(2, {NAN}), target), Contains("[0, 1]"));
  SpeculativeSpec other_vocabulary{test::model_config("deepseek-r1-671b"), 2, {0.5}};
  CHECK_THROWS_WITH(validate_speculative(other_vocabulary, target), Contains("share the target's tokenizer"));
  SimulationOptions o = at(4096, 1);
  o.speculative = llama_draft(0, {0.5});
  CHECK_THROWS_AS(simulate(target, test::system_config("sn40l-16"), o), SimulationError);
}

TEST_CASE("more accepted draft tokens are never slower", "[dataflow_sim][speculative]") {
  const auto [model_name, system_name] =
      GENERATE(table<std::string, std::string>({{"llama-3.1-70b", "sn40l-16"}, {"llama-3.1-8b", "sn40l-8"}, {"llama-3.1-8b", "dgx-h100"}}));
  const graph::ModelShape model = test::model_config(model_name);
  const SystemSpec system = test::system_config(system_name);
  const int64_t batch = GENERATE(1, 8);
  INFO(model_name << " on " << system_name << ", batch " << batch);
  double previous = 0;
  for (double a = 0; a <= 1.0001; a += 0.1) {
    SimulationOptions o = at(4096, batch);
    o.speculative = llama_draft(4, {std::min(a, 1.0)});
    const SimulationResult r = simulate(model, system, o);
    INFO("acceptance " << a);
    CHECK(r.tokens_per_s_per_user >= previous);
    previous = r.tokens_per_s_per_user;
  }
}

TEST_CASE("a round prices k draft steps and one verify step that reads the target's weights once", "[dataflow_sim][speculative]") {
  const graph::ModelShape model = test::model_config("llama-3.1-70b");
  const SystemSpec system = test::system_config("sn40l-16");
  const SimulationResult plain = simulate(model, system, at(4096, 1));
  SimulationOptions o = at(4096, 1);
  o.speculative = llama_draft(4, {0.0});
  const SimulationResult rejected = simulate(model, system, o);
  // Nothing accepted: each round still yields the target's own token, at a higher price.
  CHECK(rejected.tokens_per_round == 1.0);
  CHECK(rejected.tokens_per_s_per_user < plain.tokens_per_s_per_user);
  CHECK(rejected.step_seconds == Approx(4 * rejected.draft_step_seconds + rejected.verify_step_seconds));
  // Five positions at once cost more than one, but far less than five single steps: the
  // weights, which dominate at batch 1, stream once.
  CHECK(rejected.verify_step_seconds >= plain.step_seconds);
  CHECK(rejected.verify_step_seconds < 2 * plain.step_seconds);
  CHECK(rejected.draft_step_seconds < plain.step_seconds);
  // The draft sits in HBM beside the target: fewer sequences fit.
  CHECK(rejected.max_batch_memory < plain.max_batch_memory);
  CHECK(rejected.draft_model == "llama-1b");
}

TEST_CASE("a prompt chunk after more cached positions reads more KV", "[dataflow_sim]") {
  // The verify step and chunked prefill both attend the cache: its bytes must be priced.
  const graph::ModelShape model = test::model_config("llama-3.1-8b");
  const SystemSpec system = test::system_config("sn40l-16");
  SimulationOptions shorter = at(4096, 4), longer = at(65536, 4);
  shorter.speculative = longer.speculative = llama_draft(4, {0.7});
  const SimulationResult s = simulate(model, system, shorter), l = simulate(model, system, longer);
  CHECK(l.verify_step_seconds > s.verify_step_seconds);
  CHECK(l.step.hbm_bytes > s.step.hbm_bytes);
}

TEST_CASE("DeepSeek-R1 with its MTP module as the draft at the published acceptance is faster per user", "[dataflow_sim][speculative]") {
  const graph::ModelShape model = test::model_config("deepseek-r1-671b");
  const SystemSpec system = test::system_config("sn40l-16");
  SimulationOptions o = at(8192, 1);
  const SimulationResult plain = simulate(model, system, o);
  // One MTP token a round, accepted 85% of the time (the low end DeepSeek-V3's report gives).
  o.speculative = SpeculativeSpec{test::model_config("deepseek-r1-mtp"), 1, {0.85}};
  const SimulationResult mtp = simulate(model, system, o);
  CHECK(mtp.tokens_per_round == Approx(1.85));
  INFO("plain " << plain.tokens_per_s_per_user << " tokens/s, MTP " << mtp.tokens_per_s_per_user);
  CHECK(mtp.tokens_per_s_per_user > plain.tokens_per_s_per_user);
  CHECK(mtp.tokens_per_s_per_user < 1.85 * plain.tokens_per_s_per_user);
}
