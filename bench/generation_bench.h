// Serving throughput on this machine: N sequences prefilled into N slots, then decoded together
// through the compiled graphs, with the bytes each decode step must read.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/snapstream_config.h"

namespace snapstream::bench {

struct GenerationBenchOptions {
  int64_t concurrency = 1;  // sequences decoded together
  int64_t prompt_tokens = 128;
  int64_t decode_tokens = 64;
  int repeats = 3;          // runs; medians are reported
  runtime::SnapStreamConfig cache;   // SnapStream by default; full_cache for the baseline
  runtime::GraphPlan graphs;
  bool profile = false;     // time prefill and decode op by op (a clock read per op)
  // Called with the runner before the first step, to join tensor-parallel ranks: false on a rank
  // that has taken another rank's steps to their end, which then reports nothing.
  std::function<bool(runtime::GraphRunner&)> join;
  // Called after each repeat's decode steps, before the next prefill: what must be measured
  // beside decode under the same load (the bandwidth roofline) is measured there.
  std::function<void()> after_repeat;
};

struct GenerationBenchResult {
  double prefill_tokens_per_s = 0.0;    // prompt tokens / prefill time, over all sequences
  double prefill_seconds = 0.0;         // the median repeat's prefill of every sequence
  double compaction_share = 0.0;        // share of prefill time spent compacting (SnapKV included)
  double decode_tokens_per_s = 0.0;     // aggregate: every sequence's tokens / decode time
  double decode_seconds_per_step = 0.0;   // the median repeat's
  std::vector<double> decode_seconds_per_step_by_repeat;
  int64_t weight_bytes_per_step = 0;    // matrices read once per step
  int64_t kv_bytes_per_step = 0;        // live KV of every sequence, averaged over the run
  double weight_bytes_per_s = 0.0;      // weights / time per step: the roofline measure
  double decode_bytes_per_s = 0.0;      // (weights + KV) / time per step
  graph::OpProfile prefill_profile;     // every repeat's prefills, when asked for
  graph::OpProfile decode_profile;      // every repeat's decode steps, when asked for
  // Tensor-parallel ranks: each rank's seconds in decode steps and in their collectives, over
  // every repeat; empty in one process.
  std::vector<runtime::RankSeconds> decode_ranks;
  bool led = true;  // false on a rank that only followed another's steps (see join)
};

// Prompts are ids drawn deterministically from the vocabulary; decode feeds fixed inputs, so
// EOS cannot end the run early. Throws InvalidRequestError if the lengths exceed the context.
GenerationBenchResult run_generation_bench(const runtime::Model& model, kernels::ThreadPool& pool, const GenerationBenchOptions& options);

}  // namespace snapstream::bench
