// Rows of an evaluation and their measures. Every row reuses the full cache's runs of the same
// documents as its reference.
#include "eval/eval_run.h"

#include <algorithm>

#include "eval/cache_eval.h"
#include "runtime/errors.h"

namespace snapstream::eval {
namespace {

constexpr int64_t kGreedyTokens = 64;

double share_equal(const std::vector<int32_t>& a, const std::vector<int32_t>& b, size_t count) {
  const size_t n = std::min({count, a.size(), b.size()});
  size_t same = 0;
  for (size_t i = 0; i < n; ++i) same += a[i] == b[i];
  return n > 0 ? static_cast<double>(same) / static_cast<double>(n) : 0.0;
}

}  // namespace

int64_t resolve_budget(const std::string& text, int64_t length) {
  try {
    size_t used = 0;
    const auto slash = text.find('/');
    if (slash == std::string::npos) {
      const int64_t c = std::stoll(text, &used);
      if (used == text.size() && c > 0) return c;
    } else {
      const int64_t num = std::stoll(text.substr(0, slash), &used);
      size_t used_den = 0;
      const int64_t den = std::stoll(text.substr(slash + 1), &used_den);
      if (used == slash && used_den == text.size() - slash - 1 && num > 0 && den > 0) return std::max<int64_t>(1, length * num / den);
    }
  } catch (const std::exception&) {
  }
  throw runtime::ConfigError("budgets and rings are fractions (1/4) or numbers of positions (96), not '" + text + "'");
}

runtime::SnapStreamConfig policy_cache(const std::string& policy, int64_t budget, int64_t ring, int64_t sink, int64_t window,
                                       int64_t pool_kernel, const std::string& positions, uint64_t seed) {
  runtime::SnapStreamConfig c = measuring_cache();
  c.capacity = budget;
  c.ring = ring;
  c.sink = sink;
  c.window = window;
  c.pool_kernel = pool_kernel;
  c.positions = positions == "reindexed" ? runtime::PositionMode::Reindexed : runtime::PositionMode::Original;
  if (positions != "original" && positions != "reindexed")
    throw runtime::ConfigError("positions are 'original' or 'reindexed', not '" + positions + "'");
  if (policy == "streaming") {
    c.ring = budget - sink;  // sinks and recent tokens only: no selected prompt positions
  } else if (policy == "random") {
    c.selection = runtime::Selection::Random;
    c.selection_seed = seed;
  } else if (policy != "snapstream") {
    throw runtime::ConfigError("unknown policy '" + policy + "' (snapstream, streaming or random)");
  }
  return c;
}

bool take_policy(std::vector<std::string>& policies, const std::string& name) {
  const auto end = std::remove(policies.begin(), policies.end(), name);
  const bool found = end != policies.end();
  policies.erase(end, policies.end());
  return found;
}

bool has_default_settings(const EvalRow& row, const EvalPlan& plan) {
  return row.ring_share == plan.rings.front() && row.window == plan.windows.front() && row.pool_kernel == plan.pool_kernels.front() &&
         row.positions == plan.positions.front();
}

EvalRow full_cache_row(const EvalPlan& plan, int64_t context) {
  runtime::SnapStreamConfig full = measuring_cache(plan.kv_dtype);
  full.full_cache = true;
  return {"full", context, plan.rings.front(), context, plan.windows.front(), plan.pool_kernels.front(), plan.positions.front(), full};
}

std::vector<DocumentRun> run_documents(const runtime::Model& model, kernels::ThreadPool& pool, const runtime::SnapStreamConfig& cache,
                                       int64_t slots, std::span<const EvalDocument> documents, int64_t greedy_tokens,
                                       std::span<const DocumentRun> reference) {
  CacheEvaluator evaluator(model, pool, cache, std::min<int64_t>(slots, static_cast<int64_t>(documents.size())));
  evaluator.capture_attention(reference.empty());
  std::vector<DocumentRun> runs;
  const auto per_batch = static_cast<size_t>(evaluator.slots());
  for (size_t first = 0; first < documents.size(); first += per_batch) {
    const auto batch = documents.subspan(first, std::min(per_batch, documents.size() - first));
    const auto references = reference.empty() ? reference : reference.subspan(first, batch.size());
    for (auto& run : evaluator.run(batch, greedy_tokens, references)) runs.push_back(std::move(run));
  }
  return runs;
}

double mean_nll(const std::vector<DocumentRun>& runs) {
  double nll = 0;
  int64_t tokens = 0;
  for (const auto& r : runs) {
    for (const double lp : r.logprobs) nll -= lp;
    tokens += static_cast<int64_t>(r.logprobs.size());
  }
  return tokens > 0 ? nll / static_cast<double>(tokens) : 0.0;
}

EvalResult measure_row(const EvalRow& row, const std::vector<DocumentRun>& runs, const std::vector<DocumentRun>& reference,
                       double nll_full) {
  EvalResult result{};
  result.row = row;
  result.documents = static_cast<int64_t>(runs.size());
  result.nll_full = nll_full;
  result.nll = mean_nll(runs);
  int64_t agree = 0, tokens = 0;
  for (size_t d = 0; d < runs.size(); ++d) {
    for (size_t j = 0; j < runs[d].logprobs.size(); ++j) agree += runs[d].argmax[j] == reference[d].argmax[j];
    tokens += static_cast<int64_t>(runs[d].logprobs.size());
    result.agree16 += share_equal(runs[d].greedy, reference[d].greedy, 16);
    result.agree64 += share_equal(runs[d].greedy, reference[d].greedy, 64);
    result.attention_recall += runs[d].attention_recall;
  }
  const auto count = static_cast<double>(std::max<size_t>(1, runs.size()));
  result.attention_recall /= count;
  int64_t caches = 0, holding = 0;
  for (const auto& run : runs) {
    caches += static_cast<int64_t>(run.values_held.size());
    holding += std::count(run.values_held.begin(), run.values_held.end(), 1);
  }
  if (caches > 0) result.values_kept = static_cast<double>(holding) / static_cast<double>(caches);
  result.greedy_agreement = tokens > 0 ? static_cast<double>(agree) / static_cast<double>(tokens) : 0.0;
  result.agree16 /= count;
  result.agree64 /= count;
  return result;
}

std::vector<EvalRow> plan_rows(const EvalPlan& plan) {
  if (plan.windows.empty() || plan.pool_kernels.empty() || plan.positions.empty() || plan.policies.empty() || plan.budgets.empty())
    throw runtime::ConfigError("an evaluation needs at least one policy, budget, window, pooling width and positions mode");
  if (plan.rings.empty()) throw runtime::ConfigError("an evaluation needs at least one ring share");
  std::vector<EvalRow> rows;
  auto add = [&](const std::string& policy, int64_t budget, const std::string& ring_share, int64_t window, int64_t pool,
                 const std::string& positions) {
    auto cache = policy_cache(policy, budget, resolve_budget(ring_share, budget), plan.sink, window, pool, positions, plan.seed);
    cache.kv_dtype = plan.kv_dtype;
    rows.push_back({policy, budget, ring_share, cache.ring, window, pool, positions, cache});
  };
  const int64_t window = plan.windows.front(), pool = plan.pool_kernels.front();
  const std::string &positions = plan.positions.front(), &ring = plan.rings.front();
  for (const auto& policy : plan.policies)
    for (const int64_t budget : plan.budgets) add(policy, budget, ring, window, pool, positions);
  const bool snapstream = std::find(plan.policies.begin(), plan.policies.end(), "snapstream") != plan.policies.end();
  for (const int64_t budget : plan.budgets) {
    for (size_t i = 1; snapstream && i < plan.rings.size(); ++i) add("snapstream", budget, plan.rings[i], window, pool, positions);
    for (size_t i = 1; snapstream && i < plan.windows.size(); ++i) add("snapstream", budget, ring, plan.windows[i], pool, positions);
    for (size_t i = 1; snapstream && i < plan.pool_kernels.size(); ++i)
      add("snapstream", budget, ring, window, plan.pool_kernels[i], positions);
    for (size_t i = 1; i < plan.positions.size(); ++i)
      for (const auto& policy : plan.policies) add(policy, budget, ring, window, pool, plan.positions[i]);
  }
  return rows;
}

std::vector<EvalResult> run_eval(const runtime::Model& model, kernels::ThreadPool& pool, const EvalPlan& plan,
                                 const std::vector<std::vector<int32_t>>& documents,
                                 const std::function<void(int64_t, int64_t)>& progress) {
  if (documents.empty()) throw runtime::InvalidRequestError("there are no documents to evaluate on");
  const std::vector<EvalRow> rows = plan_rows(plan);
  for (const auto& row : rows) row.cache.resolved(model.shape.context_length);  // reject bad rows before any work
  std::vector<EvalDocument> split;
  for (const auto& ids : documents) {
    const std::span<const int32_t> all(ids);
    split.push_back({all.first(static_cast<size_t>(plan.prompt_length)),
                     all.subspan(static_cast<size_t>(plan.prompt_length), static_cast<size_t>(plan.continue_length)), {}});
  }
  const auto total = static_cast<int64_t>(rows.size()) + 1;
  runtime::SnapStreamConfig full = measuring_cache(plan.kv_dtype);
  full.full_cache = true;
  const std::vector<DocumentRun> reference = run_documents(model, pool, full, plan.slots, split, kGreedyTokens, {});
  if (progress) progress(1, total);
  const double nll_full = mean_nll(reference);

  std::vector<EvalResult> results;
  for (const EvalRow& row : rows) {
    EvalResult result = measure_row(row, run_documents(model, pool, row.cache, plan.slots, split, kGreedyTokens, reference),
                                    reference, nll_full);
    result.context = plan.prompt_length + plan.continue_length;
    results.push_back(std::move(result));
    if (progress) progress(static_cast<int64_t>(results.size()) + 1, total);
  }
  return results;
}

}  // namespace snapstream::eval
