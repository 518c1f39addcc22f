// `snapstream eval`: cache policies against the full cache on the same documents, one row per
// (policy, budget, window, pooling, positions), with the measures a reader of results.csv
// gets.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eval/cache_eval.h"
#include "kernels/thread_pool.h"
#include "runtime/model.h"
#include "runtime/snapstream_config.h"

namespace snapstream::eval {

struct EvalRow {
  std::string policy;  // snapstream, streaming or random
  int64_t budget = 0;  // C
  std::string ring_share;  // the ring's share of C as asked for ("1/2"); streaming's ring is C - S whatever it says
  int64_t ring = 0;        // R as run
  int64_t window = 0;
  int64_t pool_kernel = 0;
  std::string positions;  // original or reindexed
  runtime::SnapStreamConfig cache;
};

// One retrieval instance's outcome under a row: what it should answer, what was generated.
struct InstanceAnswer {
  std::string expected;   // the scoring completion, e.g. " 4821."
  std::string generated;  // the greedy tokens after the prompt, decoded
  bool right = false;
  std::vector<char> values_held;  // per layer and KV group: held every token the answer copies (DocumentRun)
};

struct EvalResult {
  std::string task = "continuation";  // or a retrieval task (eval/retrieval_tasks.h)
  int64_t context = 0;                 // tokens per document: L + M, or a retrieval instance's length
  EvalRow row;
  int64_t documents = 0;
  double nll = 0;               // mean NLL per continuation token under the policy
  double nll_full = 0;          // the same under the full cache
  double greedy_agreement = 0;  // share of continuation positions whose top token matches the full cache's
  double agree16 = 0;           // share of the first 16 free greedy tokens equal to the full cache's
  double agree64 = 0;
  double attention_recall = 0;  // the full cache's attention mass on positions the policy kept
  double accuracy = -1;         // retrieval tasks: share of answers exactly right; -1 elsewhere
  double values_kept = -1;      // retrieval tasks: share of layers and KV groups holding the answer's values; -1 elsewhere
  std::vector<InstanceAnswer> answers;  // retrieval tasks: every instance's, in instance order
  double nll_gap() const { return nll - nll_full; }
};

struct EvalPlan {
  int64_t prompt_length = 0;    // L
  int64_t continue_length = 0;  // M
  std::vector<int64_t> budgets;
  std::vector<std::string> policies;
  std::vector<std::string> rings = {"1/2"};  // R as a fraction of C or positions; the first is the default, the rest add SnapStream rows
  std::vector<int64_t> windows;       // likewise
  std::vector<int64_t> pool_kernels;  // likewise
  std::vector<std::string> positions; // likewise, for every policy
  int64_t sink = 4;
  uint64_t seed = 0;                  // the random policy's draws
  int64_t slots = 16;                 // documents run together
  kernels::DType kv_dtype = kernels::DType::F32;  // how every row's cache stores keys and values
};

// The rows the plan asks for: every policy at every budget with the default settings, then
// SnapStream with each other ring share, window and pooling width, and every policy with each
// other positions mode. Throws ConfigError for an unknown policy or a budget that cannot hold a
// sink and a ring.
std::vector<EvalRow> plan_rows(const EvalPlan& plan);

// C for a budget written as a fraction of `length` ("1/4") or as positions ("96"). Throws
// ConfigError for anything else.
int64_t resolve_budget(const std::string& text, int64_t length);

// The cache of a policy (snapstream, streaming, random) at budget C with a ring of R (streaming:
// C - S); throws ConfigError for an unknown policy or positions mode.
runtime::SnapStreamConfig policy_cache(const std::string& policy, int64_t budget, int64_t ring, int64_t sink, int64_t window,
                                       int64_t pool_kernel, const std::string& positions, uint64_t seed);

// "full" among a task's or stream's policies asks for the full cache's own row ("story", among a
// stream's, for the full cache restarted at every BOS): removes `name` and says whether it was there.
bool take_policy(std::vector<std::string>& policies, const std::string& name);

// Whether `row` has the plan's default ring share, window, pooling width and positions (the
// first of each): the rows plots and summaries draw; the others vary one knob.
bool has_default_settings(const EvalRow& row, const EvalPlan& plan);

// The full cache's own row at `context` (its ring is the whole context), with the plan's default
// ring share, window, pooling and positions recorded beside it, so reports group it with them.
EvalRow full_cache_row(const EvalPlan& plan, int64_t context);

// Runs `documents` under `cache`, `slots` at a time, with `greedy_tokens` free tokens after each
// prompt (fewer where the prompt leaves less room in the context). Without `reference` the runs
// capture attention (to be a reference); with it, they measure attention recall against it.
std::vector<DocumentRun> run_documents(const runtime::Model& model, kernels::ThreadPool& pool, const runtime::SnapStreamConfig& cache,
                                       int64_t slots, std::span<const EvalDocument> documents, int64_t greedy_tokens,
                                       std::span<const DocumentRun> reference);

// The measures of `row`'s runs against the full cache's (`reference`, whose mean NLL per
// continuation token is `nll_full`).
EvalResult measure_row(const EvalRow& row, const std::vector<DocumentRun>& runs, const std::vector<DocumentRun>& reference,
                       double nll_full);

// Mean NLL per continuation token of a set of runs.
double mean_nll(const std::vector<DocumentRun>& runs);

// Runs the full cache once and every row on `documents` (each L + M tokens); `progress` is
// called after each row with (rows done, rows in all).
std::vector<EvalResult> run_eval(const runtime::Model& model, kernels::ThreadPool& pool, const EvalPlan& plan,
                                 const std::vector<std::vector<int32_t>>& documents,
                                 const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace snapstream::eval
