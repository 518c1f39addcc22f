// The benchmark behind `snapstream bench`: the bandwidth and compute probes report every figure
// they claim, and the generation benchmark counts the bytes a decode step reads from the model's
// own shape.
#include <catch2/catch.hpp>

#include <algorithm>

#include "bench/compute_probe.h"
#include "bench/generation_bench.h"
#include "bench/memory_bandwidth.h"
#include "kernels/errors.h"
#include "kernels/row_groups.h"
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

TEST_CASE("the compute probe multiplies a cache-sized matrix of each type at the batch it was given", "[bench]") {
  kernels::ThreadPool pool(2), one(1);
  for (const kernels::DType dtype : {kernels::DType::F32, kernels::DType::F16, kernels::DType::Q8_0, kernels::DType::Q4_K}) {
    for (const bool row_groups : {false, true}) {
      bench::ComputeProbe probe(dtype, 768, 4, row_groups, pool.size());
      for (kernels::ThreadPool* threads : {&pool, &one}) {
        const auto result = probe.measure(*threads, 1);
        INFO(kernels::dtype_name(dtype) << (row_groups ? " in row groups" : ""));
        // Regrouped where the engine regroups: on a CPU whose kernels read this type in groups.
        const bool groups_read_here = kernels::row_groups_readable(kernels::WeightView{dtype, nullptr, 32, 768});
        CHECK(result.regrouped == (row_groups && groups_read_here));
        CHECK(result.threads == threads->size());
        CHECK(result.activation_rows == 4);
        // Sized for the larger pool, which takes a share the size of the one-thread pool's whole matrix.
        CHECK(result.weight_bytes <= 2 * bench::ComputeProbe::kWeightBytesPerThread);
        CHECK(result.weight_bytes > bench::ComputeProbe::kWeightBytesPerThread);
        CHECK(result.multiply_adds_per_s > 0.0);
      }
    }
  }
  // A row length the type cannot store, and an empty batch, are refused.
  CHECK_THROWS_AS(bench::ComputeProbe(kernels::DType::Q4_K, 100, 1, true, 1), kernels::KernelArgumentError);
  CHECK_THROWS_AS(bench::ComputeProbe(kernels::DType::F32, 64, 0, true, 1), kernels::KernelArgumentError);
  CHECK_THROWS_AS(bench::ComputeProbe(kernels::DType::F32, 64, 1, true, 0), kernels::KernelArgumentError);
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
  // stories260K: 5 layers of 64-wide q/o, 32-wide k/v, 172-wide SwiGLU, and a 512-token head.
  CHECK(model->weights.multiply_adds_per_token() == 5 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 172 * 64) + 512 * 64);
  CHECK(result.kv_bytes_per_step > 0);
  CHECK(result.decode_tokens_per_s > 0.0);
  CHECK(result.prefill_tokens_per_s > 0.0);
  options.prompt_tokens = model->shape.context_length;
  CHECK_THROWS_AS(bench::run_generation_bench(*model, pool, options), runtime::InvalidRequestError);
}
