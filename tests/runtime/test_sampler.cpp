// Sampler: determinism per seed, greedy equivalences, the sampled distribution and argument checks.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "runtime/errors.h"
#include "runtime/sampler.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {
// The four fields a test varies most; the penalties and biases keep their defaults.
SamplingParams sampling(float temperature, int64_t top_k, float top_p, uint64_t seed) {
  SamplingParams params;
  params.temperature = temperature;
  params.top_k = top_k;
  params.top_p = top_p;
  params.seed = seed;
  return params;
}

std::vector<int32_t> draw(const SamplingParams& params, const std::vector<float>& logits, int n) {
  Sampler sampler(params);
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.sample(logits));
  return out;
}
const std::vector<float> kLogits = {0.1f, 2.0f, -1.0f, 1.5f, 0.0f, 1.9f, -3.0f, 0.7f};
}  // namespace

TEST_CASE("the same seed gives the same tokens, and another seed differs", "[sampler]") {
  const SamplingParams params = sampling(0.9f, 0, 0.95f, 42);
  CHECK(draw(params, kLogits, 200) == draw(params, kLogits, 200));
  SamplingParams other = params;
  other.seed = 43;
  CHECK(draw(params, kLogits, 200) != draw(other, kLogits, 200));
}

TEST_CASE("greedy and top-k 1 pick the argmax", "[sampler]") {
  CHECK(draw(sampling(0.0f, 0, 1.0f, 1), kLogits, 5) == std::vector<int32_t>(5, 1));
  CHECK(draw(sampling(5.0f, 1, 1.0f, 1), kLogits, 5) == std::vector<int32_t>(5, 1));
  // A tiny nucleus keeps only the most likely token.
  CHECK(draw(sampling(1.0f, 0, 0.01f, 1), kLogits, 5) == std::vector<int32_t>(5, 1));
}

TEST_CASE("sampling follows softmax(logits / temperature)", "[sampler]") {
  const std::vector<float> logits = {0.0f, std::log(3.0f)};
  const auto ids = draw(sampling(1.0f, 0, 1.0f, 7), logits, 20000);
  double ones = 0;
  for (int32_t id : ids) ones += id;
  CHECK(ones / 20000.0 == Approx(0.75).margin(0.015));
  // top-k 2 over three tokens never picks the least likely.
  const auto cut = draw(sampling(1.0f, 2, 1.0f, 3), {1.0f, 0.0f, 1.1f}, 2000);
  for (int32_t id : cut) REQUIRE(id != 1);
}

TEST_CASE("invalid sampling parameters are rejected", "[sampler]") {
  CHECK_THROWS_AS(Sampler(sampling(-1.0f, 0, 1.0f, 0)), InvalidRequestError);
  CHECK_THROWS_AS(Sampler(sampling(1.0f, -2, 1.0f, 0)), InvalidRequestError);
  CHECK_THROWS_AS(Sampler(sampling(1.0f, 0, 0.0f, 0)), InvalidRequestError);
  CHECK_THROWS_AS(Sampler(sampling(1.0f, 0, 1.5f, 0)), InvalidRequestError);
  CHECK_THROWS_AS(Sampler(sampling(NAN, 0, 1.0f, 0)), InvalidRequestError);
}

TEST_CASE("logit bias shifts the choice, and penalties count the tokens already returned", "[sampler]") {
  SamplingParams biased = sampling(0.0f, 0, 1.0f, 1);
  biased.logit_bias = {{1, -100.0f}, {7, 1.5f}};  // 0.7 + 1.5 = 2.2 beats 5's 1.9
  CHECK(draw(biased, kLogits, 3) == std::vector<int32_t>(3, 7));

  // Frequency: each return costs 0.6 more. Greedy on kLogits: 1 (2.0), then 5 (1.9 beats 1's
  // 1.4), then 3 (1.5 beats 1.4 and 1.3), then 1 again (1.4 beats 1.3 and 0.9).
  SamplingParams frequent = sampling(0.0f, 0, 1.0f, 1);
  frequent.frequency_penalty = 0.6f;
  const auto ids = draw(frequent, kLogits, 4);
  CHECK(ids == std::vector<int32_t>{1, 5, 3, 1});
  // Presence: a flat cost once returned, so after the top three are used, the next one down.
  SamplingParams present = sampling(0.0f, 0, 1.0f, 1);
  present.presence_penalty = 2.0f;
  CHECK(draw(present, kLogits, 5) == std::vector<int32_t>{1, 5, 3, 7, 0});
  // Negative penalties make repeats more likely: greedy stays on the first choice.
  SamplingParams sticky = sampling(0.0f, 0, 1.0f, 1);
  sticky.presence_penalty = -1.0f;
  CHECK(draw(sticky, kLogits, 4) == std::vector<int32_t>(4, 1));
}

TEST_CASE("penalties and biases out of OpenAI's ranges are rejected", "[sampler]") {
  SamplingParams params = sampling(1.0f, 0, 1.0f, 0);
  params.frequency_penalty = 2.5f;
  CHECK_THROWS_AS(Sampler(params), InvalidRequestError);
  params.frequency_penalty = 0.0f;
  params.presence_penalty = -2.1f;
  CHECK_THROWS_AS(Sampler(params), InvalidRequestError);
  params.presence_penalty = 0.0f;
  params.logit_bias = {{3, 101.0f}};
  CHECK_THROWS_AS(Sampler(params), InvalidRequestError);
  params.logit_bias = {{-1, 1.0f}};
  CHECK_THROWS_AS(Sampler(params), InvalidRequestError);
  params.logit_bias = {{100, 1.0f}};  // beyond the 8 logits
  Sampler beyond(params);
  CHECK_THROWS_AS(beyond.sample(kLogits), InvalidRequestError);
}
