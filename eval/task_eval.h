// Retrieval accuracy under cache policies: instances of each task at each context length are
// prefilled under every policy and budget, then answered greedily and scored by exact match,
// beside the full cache's answers on the same instances.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eval/eval_run.h"
#include "eval/retrieval_tasks.h"

namespace snapstream::eval {

struct TaskPlan {
  std::vector<RetrievalTask> tasks = {RetrievalTask::SingleNeedle};
  std::vector<int64_t> contexts;     // instance lengths (prompt and answer)
  std::vector<std::string> budgets;  // fractions of each context ("1/4") or positions ("96")
  // The policies, windows, pooling widths, positions, sink, seed (of the random policy and of
  // the instances) and slots; "full" among the policies adds the full cache's own row.
  EvalPlan rows;
  int64_t instances = 100;           // per context
};

// One result per task, context and row (the full cache's first, when asked for), each with its
// accuracy, tasks in the plan's order. `progress` is called after each run with (runs done,
// runs in all).
std::vector<EvalResult> run_task_eval(const runtime::Model& model, kernels::ThreadPool& pool, const TaskPlan& plan,
                                      const Haystack& haystack, const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace snapstream::eval
