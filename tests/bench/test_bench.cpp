// The benchmark behind `snapstream bench`: the bandwidth probe reports every figure it claims,
// and the generation benchmark counts the bytes a decode step reads from the model's own shape.
#include <catch2/catch.hpp>

#include <algorithm>

#include "bench/generation_bench.h"
#include "bench/memory_bandwidth.h"
#include "runtime/errors.h"
#include "tests/support/stories_model.h"

using namespace snapstream;

TEST_CASE("the bandwidth probe reports positive rates for the buffer and threads it used, each time it is asked", "[bench]") {
  kernels::ThreadPool pool(2);
  bench::BandwidthProbe probe(pool, int64_t{8} << 20);
  for (int round = 0; round < 2; ++round) {
    const auto result = probe.measure(2);
    CHECK(result.buffer_bytes >= int64_t{8} << 20);
    CHECK(result.threads == 2);
    CHECK(result.read_bytes_per_s > 0.0);
    CHECK(result.copy_bytes_per_s > 0.0);
  }
}

TEST_CASE("the generation benchmark reads every weight once per step and refuses lengths past the context", "[bench]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  bench::GenerationBenchOptions options;
  options.concurrency = 2;
  options.prompt_tokens = 32;
  options.decode_tokens = 8;
  options.repeats = 3;
  int hooks = 0;
  options.after_repeat = [&hooks] { ++hooks; };
  const auto result = bench::run_generation_bench(*model, pool, options);
  CHECK(hooks == 3);
  // The reported step is the median repeat's.
  REQUIRE(result.decode_seconds_per_step_by_repeat.size() == 3);
  auto steps = result.decode_seconds_per_step_by_repeat;
  std::sort(steps.begin(), steps.end());
  CHECK(result.decode_seconds_per_step == steps[1]);
  CHECK(result.weight_bytes_per_step == model->weights.bytes_read_per_token());
  CHECK(result.kv_bytes_per_step > 0);
  CHECK(result.decode_tokens_per_s > 0.0);
  CHECK(result.prefill_tokens_per_s > 0.0);
  options.prompt_tokens = model->shape.context_length;
  CHECK_THROWS_AS(bench::run_generation_bench(*model, pool, options), runtime::InvalidRequestError);
}
