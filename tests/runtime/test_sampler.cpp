// Sampler: determinism per seed, greedy equivalences, the sampled distribution and argument checks.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "runtime/errors.h"
#include "runtime/sampler.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {
std::vector<int32_t> draw(const SamplingParams& params, const std::vector<float>& logits, int n) {
  Sampler sampler(params);
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.sample(logits));
  return out;
}
const std::vector<float> kLogits = {0.1f, 2.0f, -1.0f, 1.5f, 0.0f, 1.9f, -3.0f, 0.7f};
}  // namespace

TEST_CASE("the same seed gives the same tokens, and another seed differs", "[sampler]") {
  const SamplingParams params{0.9f, 0, 0.95f, 42};
  CHECK(draw(params, kLogits, 200) == draw(params, kLogits, 200));
  SamplingParams other = params;
  other.seed = 43;
  CHECK(draw(params, kLogits, 200) != draw(other, kLogits, 200));
}

TEST_CASE("greedy and top-k 1 pick the argmax", "[sampler]") {
  CHECK(draw({0.0f, 0, 1.0f, 1}, kLogits, 5) == std::vector<int32_t>(5, 1));
  CHECK(draw({5.0f, 1, 1.0f, 1}, kLogits, 5) == std::vector<int32_t>(5, 1));
  // A tiny nucleus keeps only the most likely token.
  CHECK(draw({1.0f, 0, 0.01f, 1}, kLogits, 5) == std::vector<int32_t>(5, 1));
}

TEST_CASE("sampling follows softmax(logits / temperature)", "[sampler]") {
  const std::vector<float> logits = {0.0f, std::log(3.0f)};
  const auto ids = draw({1.0f, 0, 1.0f, 7}, logits, 20000);
  double ones = 0;
  for (int32_t id : ids) ones += id;
  CHECK(ones / 20000.0 == Approx(0.75).margin(0.015));
  // top-k 2 over three tokens never picks the least likely.
  const auto cut = draw({1.0f, 2, 1.0f, 3}, {1.0f, 0.0f, 1.1f}, 2000);
  for (int32_t id : cut) REQUIRE(id != 1);
}

TEST_CASE("invalid sampling parameters are rejected", "[sampler]") {
  CHECK_THROWS_AS(Sampler({-1.0f, 0, 1.0f, 0}), InvalidRequestError);
  CHECK_THROWS_AS(Sampler({1.0f, -2, 1.0f, 0}), InvalidRequestError);
  CHECK_THROWS_AS(Sampler({1.0f, 0, 0.0f, 0}), InvalidRequestError);
  CHECK_THROWS_AS(Sampler({1.0f, 0, 1.5f, 0}), InvalidRequestError);
  CHECK_THROWS_AS(Sampler({NAN, 0, 1.0f, 0}), InvalidRequestError);
}
