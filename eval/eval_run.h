// `snapstream eval`: cache policies against the full cache on the same documents, one row per
// (policy, budget, window, pooling, positions), with the measures a reader of results.csv
// gets.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/model.h"
#include "runtime/snapstream_config.h"

namespace snapstream::eval {

struct EvalRow {
  std::string policy;  // snapstream, streaming or random
  int64_t budget = 0;  // C
  int64_t window = 0;
  int64_t pool_kernel = 0;
  std::string positions;  // original or reindexed
  runtime::SnapStreamConfig cache;
};

struct EvalResult {
  EvalRow row;
  int64_t documents = 0;
  double nll = 0;               // mean NLL per continuation token under the policy
  double nll_full = 0;          // the same under the full cache
  double greedy_agreement = 0;  // share of continuation positions whose top token matches the full cache's
  double agree16 = 0;           // share of the first 16 free greedy tokens equal to the full cache's
  double agree64 = 0;
  double attention_recall = 0;  // the full cache's attention mass on positions the policy kept
  double nll_gap() const { return nll - nll_full; }
};

struct EvalPlan {
  int64_t prompt_length = 0;    // L
  int64_t continue_length = 0;  // M
  std::vector<int64_t> budgets;
  std::vector<std::string> policies;
  std::vector<int64_t> windows;       // the first is the default; the rest add SnapStream rows
  std::vector<int64_t> pool_kernels;  // likewise
  std::vector<std::string> positions; // likewise, for every policy
  int64_t sink = 4;
  uint64_t seed = 0;                  // the random policy's draws
  int64_t slots = 16;                 // documents run together
};

// The rows the plan asks for: every policy at every budget with the default settings, then
// SnapStream with each other window and pooling width, and every policy with each other
// positions mode. Throws ConfigError for an unknown policy or a budget that cannot hold a
// sink and a ring.
std::vector<EvalRow> plan_rows(const EvalPlan& plan);

// Runs the full cache once and every row on `documents` (each L + M tokens); `progress` is
// called after each row with (rows done, rows in all).
std::vector<EvalResult> run_eval(const runtime::Model& model, kernels::ThreadPool& pool, const EvalPlan& plan,
                                 const std::vector<std::vector<int32_t>>& documents,
                                 const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace snapstream::eval
