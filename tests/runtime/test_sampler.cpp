// Sampler: determinism per seed, greedy equivalences, the sampled distribution and argument checks.
#include <catch2/catch.hpp>
#include <algorithm>
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

std::vector<int32_t> draw(const SamplingParams& params, const std::vector<float>& logits, int n,
                          const std::vector<int32_t>& prompt = {}) {
  Sampler sampler(params, prompt);
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

TEST_CASE("min-p keeps the tokens at least min_p times as likely as the likeliest, after the temperature", "[sampler]") {
  // The naive reference: softmax(logits / T), keep p >= min_p * max p, renormalise.
  auto reference = [](const std::vector<float>& logits, float temperature, float min_p) {
    std::vector<double> p(logits.size());
    double top = 0.0, total = 0.0;
    for (size_t i = 0; i < logits.size(); ++i) top = std::max(top, p[i] = std::exp(logits[i] / temperature));
    for (double& q : p) total += q = q >= min_p * top ? q : 0.0;
    for (double& q : p) q /= total;
    return p;
  };
  for (const float temperature : {1.0f, 2.0f}) {
    SamplingParams params = sampling(temperature, 0, 1.0f, 11);
    params.min_p = 0.5f;
    const int n = 20000;
    const auto ids = draw(params, kLogits, n);
    std::vector<double> seen(kLogits.size(), 0.0);
    for (int32_t id : ids) seen[static_cast<size_t>(id)] += 1.0 / n;
    const auto expected = reference(kLogits, temperature, 0.5f);
    for (size_t i = 0; i < kLogits.size(); ++i) {
      INFO("temperature " << temperature << ", token " << i);
      if (expected[i] == 0.0) CHECK(seen[i] == 0.0);
      else CHECK(seen[i] == Approx(expected[i]).margin(0.015));
    }
  }
  // At temperature 2, token 7 (0.7) is within half of the likeliest; at 1 it is not.
  SamplingParams hot = sampling(2.0f, 0, 1.0f, 5);
  hot.min_p = 0.5f;
  const auto hot_ids = draw(hot, kLogits, 2000);
  CHECK(std::count(hot_ids.begin(), hot_ids.end(), 7) > 0);
  // With top-p, the smaller of the two cuts holds: top-p 0.01 leaves the likeliest alone.
  SamplingParams both = sampling(1.0f, 0, 0.01f, 5);
  both.min_p = 0.1f;
  CHECK(draw(both, kLogits, 20) == std::vector<int32_t>(20, 1));
  // min_p 1 keeps only the likeliest.
  SamplingParams sharp = sampling(1.0f, 0, 1.0f, 5);
  sharp.min_p = 1.0f;
  CHECK(draw(sharp, kLogits, 20) == std::vector<int32_t>(20, 1));
}

TEST_CASE("the repetition penalty divides positive logits and multiplies negative ones of tokens seen", "[sampler]") {
  SamplingParams params = sampling(0.0f, 0, 1.0f, 1);
  params.repetition_penalty = 1.25f;
  // Greedy on kLogits: 1 (2.0) is penalised once to 1.6, so 5 (1.9) wins, then 5 falls to 1.52
  // and 1 wins and stays: the penalty does not compound with each return.
  CHECK(draw(params, kLogits, 4, {1}) == std::vector<int32_t>{5, 1, 1, 1});
  CHECK(draw(params, kLogits, 4) == std::vector<int32_t>{1, 5, 1, 1});
  // A negative logit is multiplied, so it falls too: -1.0 * 1.25 is below -1.1.
  CHECK(draw(params, {-1.0f, -1.1f}, 1, {0}) == std::vector<int32_t>{1});
  // Below 1 it favours repeats: 3 (1.5 / 0.5 = 3.0) beats 1 (2.0).
  params.repetition_penalty = 0.5f;
  CHECK(draw(params, kLogits, 2, {3}) == std::vector<int32_t>{3, 3});
  // Without a penalty the prompt is not read at all.
  params.repetition_penalty = 1.0f;
  CHECK(draw(params, kLogits, 2, {1, 99}) == std::vector<int32_t>{1, 1});
  // A prompt token beyond the logits is refused, not read past them.
  params.repetition_penalty = 1.1f;
  Sampler beyond(params, std::vector<int32_t>{99});
  CHECK_THROWS_AS(beyond.sample(kLogits), InvalidRequestError);
}

TEST_CASE("min-p and repetition penalties out of range are rejected", "[sampler]") {
  for (const float min_p : {-0.1f, 1.5f, NAN}) {
    SamplingParams params = sampling(1.0f, 0, 1.0f, 0);
    params.min_p = min_p;
    CHECK_THROWS_AS(Sampler(params), InvalidRequestError);
  }
  for (const float penalty : {0.0f, -1.0f, NAN, INFINITY}) {
    SamplingParams params = sampling(1.0f, 0, 1.0f, 0);
    params.repetition_penalty = penalty;
    CHECK_THROWS_AS(Sampler(params), InvalidRequestError);
  }
}
