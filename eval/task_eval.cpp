// Retrieval task evaluation: the full cache's runs of each context's instances are the
// reference every policy's runs are measured against (answer NLL, agreement, attention recall).
#include "eval/task_eval.h"

#include <algorithm>

#include "runtime/errors.h"

namespace snapstream::eval {
namespace {

// Free tokens generated after each prompt: past the answer's own length by this many, room
// permitting, so an answer spelled in more tokens is still read to its full stop.
constexpr int64_t kSpareAnswerTokens = 2;

// Each instance's answer under a row, and the share right.
void score(const std::vector<DocumentRun>& runs, const std::vector<TaskInstance>& instances,
           const runtime::Tokenizer& tokenizer, EvalResult& result) {
  int64_t right = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    InstanceAnswer& answer = result.answers.emplace_back();
    answer.expected = instances[i].answer;
    answer.generated = tokenizer.decode(runs[i].greedy);
    answer.right = answers(instances[i], answer.generated);
    answer.values_held = runs[i].values_held;
    right += answer.right;
  }
  result.accuracy = static_cast<double>(right) / static_cast<double>(std::max<size_t>(1, runs.size()));
}

}  // namespace

std::vector<EvalResult> run_task_eval(const runtime::Model& model, kernels::ThreadPool& pool, const TaskPlan& plan,
                                      const Haystack& haystack, const std::function<void(int64_t, int64_t)>& progress) {
  if (plan.tasks.empty() || plan.contexts.empty() || plan.instances <= 0)
    throw runtime::ConfigError("a task evaluation needs tasks, contexts and instances");
  EvalPlan rows_plan = plan.rows;
  const bool full_row = take_policy(rows_plan.policies, "full");

  // Every context's rows, checked before any work.
  std::vector<std::vector<EvalRow>> rows_by_context;
  for (const int64_t context : plan.contexts) {
    if (context > model.shape.context_length)
      throw runtime::ConfigError("context " + std::to_string(context) + " exceeds the model's context of " +
                                 std::to_string(model.shape.context_length));
    rows_plan.budgets.clear();
    for (const auto& budget : plan.budgets) rows_plan.budgets.push_back(resolve_budget(budget, context));
    rows_by_context.push_back(rows_plan.policies.empty() ? std::vector<EvalRow>{} : plan_rows(rows_plan));
    for (const auto& row : rows_by_context.back()) row.cache.resolved(model.shape.context_length);
  }
  int64_t total = 0, done = 0;
  for (const auto& rows : rows_by_context) total += static_cast<int64_t>(rows.size()) + 1;
  total *= static_cast<int64_t>(plan.tasks.size());

  std::vector<EvalResult> results;
  for (const RetrievalTask task : plan.tasks) {
    for (size_t k = 0; k < plan.contexts.size(); ++k) {
      const int64_t context = plan.contexts[k];
      std::vector<TaskInstance> instances;
      std::vector<EvalDocument> documents;
      // Each instance generates as far as its prompt leaves room (run_documents); a budget cut to
      // the room of the longest prompt would stop other instances before their answers end.
      int64_t greedy = 0;
      for (int64_t i = 0; i < plan.instances; ++i)
        instances.push_back(make_task_instance(task, context, haystack, model.tokenizer, plan.rows.seed, i));
      for (const auto& instance : instances) {
        documents.push_back({instance.prompt, instance.answer_ids, instance.needed_values});
        greedy = std::max(greedy, static_cast<int64_t>(instance.answer_ids.size()) + kSpareAnswerTokens);
      }

      auto finish = [&](EvalResult result, const std::vector<DocumentRun>& runs) {
        result.task = std::string(retrieval_task_name(task));
        result.context = context;
        score(runs, instances, model.tokenizer, result);
        results.push_back(std::move(result));
      };
      const EvalRow full = full_cache_row(plan.rows, context);
      const std::vector<DocumentRun> reference = run_documents(model, pool, full.cache, plan.rows.slots, documents, greedy, {});
      const double nll_full = mean_nll(reference);
      if (progress) progress(++done, total);
      if (full_row) {
        EvalResult result = measure_row(full, reference, reference, nll_full);
        result.attention_recall = 1.0;  // the full cache holds every position
        finish(std::move(result), reference);
      }
      for (const EvalRow& row : rows_by_context[k]) {
        const auto runs = run_documents(model, pool, row.cache, plan.rows.slots, documents, greedy, reference);
        finish(measure_row(row, runs, reference, nll_full), runs);
        if (progress) progress(++done, total);
      }
    }
  }
  return results;
}

}  // namespace snapstream::eval
