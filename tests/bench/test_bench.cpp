// The benchmark behind `snapstream bench`: the bandwidth probe reports every figure it claims,
// and the generation benchmark counts the bytes a decode step reads from the model's own shape.
#include <catch2/catch.hpp>

#include "bench/generation_bench.h"
#include "bench/memory_bandwidth.h"
#include "runtime/errors.h"
#include "tests/support/stories_model.h"

using namespace snapstream;

TEST_CASE("the bandwidth probe reports positive rates for the buffer and threads it used", "[bench]") {
  kernels::ThreadPool pool(2);
  const auto result = bench::measure_bandwidth(pool, int64_t{8} << 20, 2);
  CHECK(result.buffer_bytes >= int64_t{8} << 20);
  CHECK(result.threads == 2);
  CHECK(result.read_bytes_per_s > 0.0);
  CHECK(result.copy_bytes_per_s > 0.0);
}

TEST_CASE("the generation benchmark reads every weight once per step and refuses lengths past the context", "[bench]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  kernels::ThreadPool pool(2);
  bench::GenerationBenchOptions options;
  options.concurrency = 2;
  options.prompt_tokens = 32;
  options.decode_tokens = 8;
  options.repeats = 1;
  const auto result = bench::run_generation_bench(*model, pool, options);
  CHECK(result.weight_bytes_per_step == model->weights.bytes_read_per_token());
  CHECK(result.kv_bytes_per_step > 0);
  CHECK(result.decode_tokens_per_s > 0.0);
  CHECK(result.prefill_tokens_per_s > 0.0);
  options.prompt_tokens = model->shape.context_length;
  CHECK_THROWS_AS(bench::run_generation_bench(*model, pool, options), runtime::InvalidRequestError);
}
