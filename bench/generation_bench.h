// Prefill and decode throughput of a model on this machine, with the decode roofline share.
#pragma once

#include <cstdint>

#include "kernels/thread_pool.h"
#include "runtime/model.h"
#include "runtime/snapstream_config.h"

namespace snapstream::bench {

struct GenerationBenchOptions {
  int64_t prompt_tokens = 128;
  int64_t decode_tokens = 64;
  int repeats = 3;
  SnapStreamConfig cache;  // SnapStream by default; full_cache for the baseline
};

struct GenerationBenchResult {
  double prefill_tokens_per_s = 0.0;  // median over repeats
  double decode_tokens_per_s = 0.0;   // median over repeats
  double decode_seconds_per_token = 0.0;
  int64_t weight_bytes_per_token = 0;  // matrices read once per decode step
  int64_t kv_bytes_per_token = 0;      // live cache read per decode step, averaged over the run
  double weight_bytes_per_s = 0.0;     // weights / time per token: the roofline measure
  double decode_bytes_per_s = 0.0;     // (weights + KV) / time per token
};

// Runs a prompt of ids drawn deterministically from the vocabulary, then decodes with fixed
// inputs (so EOS cannot end the run early). Throws InvalidRequestError if the lengths exceed the context.
GenerationBenchResult run_generation_bench(const Model& model, kernels::ThreadPool& pool, const GenerationBenchOptions& options);

}  // namespace snapstream::bench
